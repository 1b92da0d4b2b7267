package dev.transferengine.autoconfigure;

import dev.transferengine.Device;
import dev.transferengine.IdleStrategyKind;
import dev.transferengine.TransferEngine;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TransferEngineAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    TransferEngineAutoConfiguration.class, ReactiveTransferEngineAutoConfiguration.class));

    @Test
    void runCreatesATcpEngineOfOneGroupOfOneNicAndItsReactiveFacade() {
        runner.run(context -> {
            assertThat(context)
                    .hasSingleBean(TransferEngine.class)
                    .hasSingleBean(ReactiveTransferEngine.class)
                    .hasSingleBean(TransferEngineLifecycle.class);
            final TransferEngine engine = context.getBean(TransferEngine.class);
            assertThat(engine.transport()).isEqualTo("tcp");
            assertThat(engine.groupCount()).isEqualTo(1);
            assertThat(engine.nicCount(0)).isEqualTo(1);
            assertThat(context.getBean(ReactiveTransferEngine.class).engine()).isSameAs(engine);
        });
    }

    @Test
    void runBindsGroupsNicsAndReactiveSettingsFromProperties() {
        runner.withPropertyValues(
                        "transfer-engine.groups[0].nics=2",
                        "transfer-engine.groups[1].nics=3",
                        "transfer-engine.worker.idle-strategy=yield",
                        "transfer-engine.timeouts.imm=7s",
                        "transfer-engine.receive.pool-size=5",
                        "transfer-engine.receive.buffer-size=2KB")
                .run(context -> {
                    final TransferEngine engine = context.getBean(TransferEngine.class);
                    assertThat(engine.groupCount()).isEqualTo(2);
                    assertThat(engine.nicCount(0)).isEqualTo(2);
                    assertThat(engine.nicCount(1)).isEqualTo(3);
                    final TransferEngineProperties properties = context.getBean(TransferEngineProperties.class);
                    assertThat(properties.getWorker().getIdleStrategy()).isEqualTo(IdleStrategyKind.YIELD);
                    assertThat(properties.getReceive().getBufferSize()).isEqualTo(DataSize.ofKilobytes(2));
                    assertThat(context.getBean(ReactiveTransferEngine.class).options())
                            .satisfies(
                                    options -> assertThat(options.immTimeout()).isEqualTo(Duration.ofSeconds(7)))
                            .satisfies(options ->
                                    assertThat(options.receivePoolSize()).isEqualTo(5))
                            .satisfies(options ->
                                    assertThat(options.receiveBufferSize()).isEqualTo(2048));
                });
    }

    @Test
    void runPassesTheTcpClusterKeyToTheTransport() {
        runner.withPropertyValues("transfer-engine.tcp.cluster-key=short").run(context -> assertThat(context)
                .hasFailed()
                .getFailure()
                .rootCause()
                .hasMessageContaining("at least 32 random bytes"));
        runner.withPropertyValues("transfer-engine.tcp.cluster-key=eJAYUQCjrxilHKAvc7GK5pJOqM9xQa8TZ/WEPFILIKA=")
                .run(context -> assertThat(context).hasSingleBean(TransferEngine.class));
    }

    @Test
    void runPassesTheTlsRecordsChoiceToTheTransportAndRefusesAnUnknownOne() {
        final AtomicReference<String> records = new AtomicReference<>();
        final ApplicationContextRunner seeing = runner.withBean(
                TransferEngineBuilderCustomizer.class,
                () -> builder -> records.set(builder.config().option("tcp.tlsRecords", "the transport's default")));

        seeing.run(context -> assertThat(context).hasNotFailed());
        assertThat(records.get()).isEqualTo("the transport's default");
        seeing.withPropertyValues("transfer-engine.tcp.ssl.records=JSSE")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(records.get()).isEqualTo("jsse");
        seeing.withPropertyValues("transfer-engine.tcp.ssl.records=engine")
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(records.get()).isEqualTo("engine");

        runner.withPropertyValues("transfer-engine.tcp.ssl.records=openssl").run(context -> assertThat(context)
                .hasFailed()
                .getFailure()
                .rootCause()
                .isInstanceOf(InvalidTransferEnginePropertyException.class)
                .hasMessageContaining("transfer-engine.tcp.ssl.records")
                .hasMessageContaining("openssl"));
    }

    @Test
    void runAppliesBuilderCustomizersAfterTheProperties() {
        runner.withBean(TransferEngineBuilderCustomizer.class, () -> builder -> builder.group(2))
                .run(context -> {
                    final TransferEngine engine = context.getBean(TransferEngine.class);
                    assertThat(engine.groupCount()).isEqualTo(2);
                    assertThat(engine.nicCount(1)).isEqualTo(2);
                });
    }

    @Test
    void runWithAUserEngineBacksOffAndAddsNoLifecycle() {
        try (TransferEngine own = TransferEngine.builder().build()) {
            runner.withBean("ownEngine", TransferEngine.class, () -> own).run(context -> {
                assertThat(context).hasSingleBean(TransferEngine.class).doesNotHaveBean(TransferEngineLifecycle.class);
                assertThat(context.getBean(TransferEngine.class)).isSameAs(own);
                assertThat(context.getBean(ReactiveTransferEngine.class).engine())
                        .isSameAs(own);
            });
        }
    }

    @Test
    void runWithAUserReactiveEngineBacksOff() {
        runner.withUserConfiguration(OwnReactive.class)
                .run(context -> assertThat(context.getBean(ReactiveTransferEngine.class))
                        .isSameAs(context.getBean("ownReactive")));
    }

    @Test
    void closingTheContextClosesTheEngine() {
        final AtomicReference<TransferEngine> engine = new AtomicReference<>();
        runner.run(context -> engine.set(context.getBean(TransferEngine.class)));

        assertThat(engine.get().isHealthy()).isFalse();
        try (Arena arena = Arena.ofConfined()) {
            assertThatThrownBy(() -> engine.get().register(arena.allocate(64), Device.host()))
                    .isInstanceOf(EngineClosedException.class);
        }
    }

    @Test
    void runWithoutTheEngineOnTheClasspathBacksOff() {
        runner.withClassLoader(new FilteredClassLoader(TransferEngine.class)).run(context -> assertThat(context)
                .doesNotHaveBean(TransferEngine.class)
                .doesNotHaveBean(ReactiveTransferEngine.class));
    }

    @Test
    void runWithoutReactorOnTheClasspathCreatesNoReactiveFacade() {
        runner.withClassLoader(new FilteredClassLoader(Mono.class)).run(context -> assertThat(context)
                .hasSingleBean(TransferEngine.class)
                .doesNotHaveBean(ReactiveTransferEngine.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnReactive {

        @Bean
        ReactiveTransferEngine ownReactive(final TransferEngine engine) {
            return new ReactiveTransferEngine(engine);
        }
    }

    @Test
    void aNativeImageFailsStartUpSayingTheStarterIsJvmOnly() {
        TransferEngineAutoConfiguration.requireJvm(false);
        assertThatThrownBy(() -> TransferEngineAutoConfiguration.requireJvm(true))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("JVM only")
                .hasMessageContaining("native image")
                .hasMessageContaining("--enable-native-access");
    }
}
