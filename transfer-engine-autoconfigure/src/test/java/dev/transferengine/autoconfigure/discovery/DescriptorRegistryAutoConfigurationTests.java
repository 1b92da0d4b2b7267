package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.InvalidTransferEnginePropertyException;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.exchange.DescriptorExchangeAutoConfiguration;

import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

/** Which registry {@code transfer-engine.discovery.type} gives, and what start-up refuses. */
class DescriptorRegistryAutoConfigurationTests {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private static RedisServer redis;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    TransferEngineAutoConfiguration.class,
                    DescriptorExchangeAutoConfiguration.class,
                    DataRedisAutoConfiguration.class,
                    DataRedisReactiveAutoConfiguration.class,
                    RedisDescriptorRegistryAutoConfiguration.class,
                    DescriptorRegistryAutoConfiguration.class));

    @BeforeAll
    static void startRedis() throws IOException {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void withoutADiscoveryTypeThereIsNoRegistry() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(DescriptorRegistry.class);
            assertThat(context).doesNotHaveBean(DescriptorRegistryLifecycle.class);
        });
    }

    @Test
    void theRedisTypeAnnouncesTheEngineInTheRedisOfSpringDataRedisAndRemovesItAtShutdown() {
        final AtomicReference<DescriptorRegistry> registry = new AtomicReference<>();
        runner.withPropertyValues(
                        "transfer-engine.discovery.type=redis",
                        "transfer-engine.discovery.name=app-0",
                        "transfer-engine.discovery.redis-key-prefix=te-autoconfig:",
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + redis.port())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).getBean(DescriptorRegistry.class).isInstanceOf(RedisDescriptorRegistry.class);
                    final DescriptorRegistry bean = context.getBean(DescriptorRegistry.class);
                    assertThat(bean.engineName()).isEqualTo("app-0");
                    final RegisteredEngine announced =
                            Objects.requireNonNull(bean.lookup("app-0").block(WAIT));
                    assertThat(announced.mainAddress())
                            .isEqualTo(context.getBean(TransferEngine.class).mainAddress());
                    assertThat(announced.regions()).isEmpty();
                    registry.set(bean);
                });
        runner.withPropertyValues(
                        "transfer-engine.discovery.type=redis",
                        "transfer-engine.discovery.name=app-1",
                        "transfer-engine.discovery.redis-key-prefix=te-autoconfig:",
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + redis.port())
                .run(context -> StepVerifier.create(
                                context.getBean(DescriptorRegistry.class).lookup("app-0"))
                        .as("app-0 unpublished itself when its context closed")
                        .expectComplete()
                        .verify(WAIT));
        assertThat(registry.get()).isNotNull();
    }

    @Test
    void aRemoteRedisWithoutTlsOrAPasswordFailsStartUpNamingTheFix() {
        runner.withPropertyValues(
                        "transfer-engine.discovery.type=redis",
                        "spring.data.redis.host=192.0.2.10") // TEST-NET-1: never connected to, refused before
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .rootCause()
                            .isInstanceOf(InvalidTransferEnginePropertyException.class)
                            .hasMessageContaining("transfer-engine.discovery.redis-allow-insecure")
                            .hasMessageContaining("192.0.2.10");
                    final InvalidTransferEnginePropertyException failure = (InvalidTransferEnginePropertyException)
                            rootCause(Objects.requireNonNull(context.getStartupFailure()));
                    assertThat(failure.action()).contains("spring.data.redis.ssl.enabled=true");
                });
    }

    @Test
    void theRedisTypeWithoutSpringDataRedisFailsStartUpNamingTheStarter() {
        runner.withClassLoader(new FilteredClassLoader(ReactiveStringRedisTemplate.class))
                .withPropertyValues("transfer-engine.discovery.type=redis")
                .run(context -> {
                    assertThat(context).hasFailed();
                    final InvalidTransferEnginePropertyException failure = (InvalidTransferEnginePropertyException)
                            rootCause(Objects.requireNonNull(context.getStartupFailure()));
                    assertThat(failure.property()).isEqualTo("transfer-engine.discovery.type");
                    assertThat(failure.action()).contains("spring-boot-starter-data-redis-reactive");
                });
    }

    @Test
    void anUnknownTypeFailsStartUp() {
        runner.withPropertyValues("transfer-engine.discovery.type=zookeeper").run(context -> {
            assertThat(context).hasFailed();
            assertThat(rootCause(Objects.requireNonNull(context.getStartupFailure())))
                    .isInstanceOf(InvalidTransferEnginePropertyException.class)
                    .hasMessageContaining("'zookeeper'");
        });
    }

    @Test
    void theHttpTypeWithoutTheExchangeEndpointFailsStartUp() {
        runner.withPropertyValues("transfer-engine.discovery.type=http").run(context -> {
            assertThat(context).hasFailed();
            final InvalidTransferEnginePropertyException failure = (InvalidTransferEnginePropertyException)
                    rootCause(Objects.requireNonNull(context.getStartupFailure()));
            assertThat(failure.property()).isEqualTo("transfer-engine.exchange.enabled");
        });
    }

    @Test
    void theHttpTypeWithTheExchangeIsTheHttpRegistry() {
        runner.withPropertyValues(
                        "transfer-engine.discovery.type=http",
                        "transfer-engine.exchange.enabled=true",
                        "transfer-engine.discovery.http-peers.decode-0=http://127.0.0.1:1")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    final DescriptorRegistry registry = context.getBean(DescriptorRegistry.class);
                    assertThat(registry).isInstanceOf(HttpDescriptorRegistry.class);
                    assertThat(registry.engineName()).startsWith("transfer-engine-");
                    StepVerifier.create(registry.lookup("decode-0"))
                            .as("a peer that does not answer is not there")
                            .expectComplete()
                            .verify(WAIT);
                });
    }

    private static Throwable rootCause(final Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }
}
