package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.discovery.RegistryChange.Kind;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.Objects;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP registry between two WebFlux services on loopback: one publishes, the other looks it up and watches it
 * appear, change with a rekey and vanish when it stops.
 */
class HttpDescriptorRegistryTests {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @Test
    void aPeerIsFoundByNameWatchedAsItChangesAndVanishesWhenItStops() {
        final ConfigurableApplicationContext decode = start("decode-0", "transfer-engine.exchange.enabled=true");
        try (ConfigurableApplicationContext prefill = start(
                        "prefill-0",
                        "transfer-engine.exchange.enabled=true",
                        "transfer-engine.discovery.http-peers.decode-0=" + baseUrl(decode));
                Arena arena = Arena.ofShared()) {
            final DescriptorRegistry decodeRegistry = decode.getBean(DescriptorRegistry.class);
            final MemoryRegion pool =
                    decode.getBean(TransferEngine.class).register(arena.allocate(4096, 4096), Device.host());
            decodeRegistry.publish("kv-pool", pool).block(WAIT);
            final DescriptorRegistry registry = prefill.getBean(DescriptorRegistry.class);

            final RegisteredEngine found =
                    Objects.requireNonNull(registry.lookup("decode-0").block(WAIT));
            assertThat(found.mainAddress())
                    .isEqualTo(decode.getBean(TransferEngine.class).mainAddress());
            assertThat(found.region("kv-pool")).isEqualTo(pool.descriptor());

            StepVerifier.create(registry.watch())
                    .assertNext(change -> assertThat(change.kind()).isEqualTo(Kind.APPEARED))
                    .then(() -> decodeRegistry.publish("kv-pool", pool.rekey()).block(WAIT))
                    .assertNext(change -> {
                        assertThat(change.kind()).isEqualTo(Kind.CHANGED);
                        assertThat(change.engine().generation()).isGreaterThan(found.generation());
                        assertThat(change.engine().region("kv-pool")).isEqualTo(pool.descriptor());
                    })
                    .then(decode::close)
                    // shutdown withdraws the regions before the web server stops: a poll in between sees none
                    .thenConsumeWhile(change -> change.kind() == Kind.CHANGED
                            && change.engine().regions().isEmpty())
                    .assertNext(change -> assertThat(change.kind()).isEqualTo(Kind.VANISHED))
                    .thenCancel()
                    .verify(WAIT);
            StepVerifier.create(registry.lookup("decode-0")).expectComplete().verify(WAIT);
        } finally {
            decode.close();
        }
    }

    private static ConfigurableApplicationContext start(final String name, final String... properties) {
        return new SpringApplicationBuilder(Service.class)
                .web(WebApplicationType.REACTIVE)
                .properties(
                        "server.port=0",
                        "server.address=127.0.0.1",
                        "management.health.redis.enabled=false",
                        "transfer-engine.discovery.type=http",
                        "transfer-engine.discovery.watch-interval=100ms",
                        "transfer-engine.discovery.name=" + name)
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
