package dev.transferengine.autoconfigure.exchange;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleWrite;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.NoSuchElementException;
import java.util.Objects;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two WebFlux services in one JVM, each its own application context on a random loopback port: the decode service
 * publishes a region, the prefill service fetches its descriptors over HTTP and writes into it through its engine.
 */
class DescriptorExchangeTests {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int SIZE = 64 * 1024;
    private static final int IMM = 7;

    @Test
    void aPeerFetchesPublishedDescriptorsOverHttpAndWritesIntoTheRegion() {
        try (ConfigurableApplicationContext decode = start("transfer-engine.exchange.enabled=true");
                ConfigurableApplicationContext prefill = start();
                Arena arena = Arena.ofShared()) {
            final MemorySegment pool = arena.allocate(SIZE, 4096);
            final ReactiveTransferEngine decodeEngine = decode.getBean(ReactiveTransferEngine.class);
            decode.getBean(PublishedRegions.class)
                    .publish("kv-pool", decodeEngine.engine().register(pool, Device.host()));
            final ReactiveTransferEngine prefillEngine = prefill.getBean(ReactiveTransferEngine.class);
            final MemorySegment source = arena.allocate(SIZE, 4096).fill((byte) 0x5A);
            final MemoryRegion sourceRegion = prefillEngine.engine().register(source, Device.host());
            final DescriptorFetcher fetcher = prefill.getBean(DescriptorFetcher.class);

            final ServiceDescriptors published =
                    Objects.requireNonNull(fetcher.fetch(baseUrl(decode)).block(WAIT));
            assertThat(published.mainAddress()).isEqualTo(decodeEngine.engine().mainAddress());
            final RegionDescriptor target =
                    Objects.requireNonNull(published.regions().get("kv-pool"), "kv-pool published");
            StepVerifier.create(prefillEngine
                            .write(SingleWrite.of(sourceRegion, 0, SIZE, target, 0)
                                    .withImm(IMM))
                            .then(decodeEngine.expectImm(IMM, 1)))
                    .expectComplete()
                    .verify(WAIT);

            assertThat(pool.get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) 0x5A);
            assertThat(pool.get(ValueLayout.JAVA_BYTE, SIZE - 1)).isEqualTo((byte) 0x5A);
            assertThat(fetcher.fetch(baseUrl(decode), "kv-pool").block(WAIT)).isEqualTo(target);
        }
    }

    /** A plain WebFlux application: spring-boot-starter-webflux without spring-boot-starter-webclient's builder. */
    @Test
    void aServiceWithoutAWebClientBuilderBeanReadsDescriptorsToo() {
        try (ConfigurableApplicationContext decode = start("transfer-engine.exchange.enabled=true");
                ConfigurableApplicationContext prefill =
                        start("spring.autoconfigure.exclude=org.springframework.boot.webclient.autoconfigure."
                                + "WebClientAutoConfiguration");
                Arena arena = Arena.ofShared()) {
            assertThat(prefill.getBeanProvider(WebClient.Builder.class).getIfAvailable())
                    .isNull();
            final MemoryRegion region = decode.getBean(ReactiveTransferEngine.class)
                    .engine()
                    .register(arena.allocate(4096, 4096), Device.host());
            decode.getBean(PublishedRegions.class).publish("kv-pool", region);
            final RegionDescriptor published = region.descriptor();

            final DescriptorFetcher fetcher = prefill.getBean(DescriptorFetcher.class);
            assertThat(fetcher.fetch(baseUrl(decode), "kv-pool").block(WAIT)).isEqualTo(published);
            assertThat(Objects.requireNonNull(fetcher.fetch(baseUrl(decode)).block(WAIT))
                            .regions())
                    .containsEntry("kv-pool", published);
        }
    }

    @Test
    void anUnpublishedNameFailsWithTheServiceAndTheName() {
        try (ConfigurableApplicationContext decode = start("transfer-engine.exchange.enabled=true")) {
            StepVerifier.create(decode.getBean(DescriptorFetcher.class).fetch(baseUrl(decode), "nothing"))
                    .expectErrorSatisfies(error -> assertThat(error)
                            .isInstanceOf(NoSuchElementException.class)
                            .hasMessage("the service at " + baseUrl(decode) + " publishes no region 'nothing'"))
                    .verify(WAIT);
        }
    }

    @Test
    void theEndpointIsOffUnlessEnabled() {
        try (ConfigurableApplicationContext service = start();
                Arena arena = Arena.ofShared()) {
            service.getBean(PublishedRegions.class)
                    .publish(
                            "kv-pool",
                            service.getBean(ReactiveTransferEngine.class)
                                    .engine()
                                    .register(arena.allocate(4096, 4096), Device.host()));

            StepVerifier.create(WebClient.create(baseUrl(service))
                            .get()
                            .uri("/transfer-engine/descriptors")
                            .retrieve()
                            .toBodilessEntity())
                    .expectError(WebClientResponseException.NotFound.class)
                    .verify(WAIT);
        }
    }

    private static ConfigurableApplicationContext start(final String... properties) {
        return new SpringApplicationBuilder(Service.class)
                .web(WebApplicationType.REACTIVE)
                .properties("server.port=0", "server.address=127.0.0.1")
                .properties(properties)
                .run();
    }

    private static String baseUrl(final ConfigurableApplicationContext context) {
        return "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Service {}
}
