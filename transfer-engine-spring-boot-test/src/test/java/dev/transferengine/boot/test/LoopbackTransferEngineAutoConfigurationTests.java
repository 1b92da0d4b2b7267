package dev.transferengine.boot.test;

import dev.transferengine.Device;
import dev.transferengine.ImmWrite;
import dev.transferengine.MemoryRegion;
import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.ReactiveTransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.lang.foreign.Arena;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

class LoopbackTransferEngineAutoConfigurationTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    LoopbackTransferEngineAutoConfiguration.class,
                    TransferEngineAutoConfiguration.class,
                    ReactiveTransferEngineAutoConfiguration.class));

    @Test
    void withoutTheSwitchThereIsNoPeerAndNoGeneratedKey() {
        runner.run(context -> assertThat(context)
                .hasSingleBean(TransferEngine.class)
                .doesNotHaveBean(LoopbackPeer.class)
                .doesNotHaveBean(LoopbackClusterKey.class));
    }

    @Test
    void theSwitchGivesAPeerThatReachesTheApplicationsEngine() {
        runner.withPropertyValues(LoopbackTransferEngineAutoConfiguration.PROPERTY + "=true")
                .run(context -> {
                    assertThat(context).hasSingleBean(LoopbackPeer.class).hasSingleBean(LoopbackClusterKey.class);
                    final TransferEngine application = context.getBean(TransferEngine.class);
                    final LoopbackPeer peer = context.getBean(LoopbackPeer.class);
                    assertThat(application.transport()).isEqualTo("tcp");
                    assertThat(peer.engine()).isNotSameAs(application);
                    try (Arena arena = Arena.ofShared()) {
                        final MemoryRegion inbox = application.register(arena.allocate(4096, 4096), Device.host());

                        StepVerifier.create(peer.reactive()
                                        .write(ImmWrite.of(inbox.descriptor(), 5))
                                        .then(context.getBean(ReactiveTransferEngine.class)
                                                .expectImm(5, 1)))
                                .expectComplete()
                                .verify(WAIT);
                        application.deregister(inbox);
                    }
                });
    }

    @Test
    void faultsAreOnlyThereWhenSwitchedOnAndThenBothEnginesRunTheHoldingTransport() {
        runner.withPropertyValues(LoopbackTransferEngineAutoConfiguration.PROPERTY + "=true")
                .run(context -> assertThat(context).doesNotHaveBean(TransferEngineFaults.class));
        runner.withPropertyValues(
                        LoopbackTransferEngineAutoConfiguration.PROPERTY + "=true",
                        LoopbackTransferEngineAutoConfiguration.FAULTS_PROPERTY + "=true")
                .run(context -> {
                    assertThat(context).hasSingleBean(TransferEngineFaults.class);
                    assertThat(context.getBean(TransferEngine.class).transport())
                            .isEqualTo("holding");
                    assertThat(context.getBean(LoopbackPeer.class).engine().transport())
                            .isEqualTo("holding");
                });
    }

    @Test
    void theGeneratedKeyReplacesAConfiguredOneAndTransportAndBindAddress() {
        runner.withPropertyValues(
                        LoopbackTransferEngineAutoConfiguration.PROPERTY + "=true",
                        "transfer-engine.tcp.cluster-key=short",
                        "transfer-engine.bind-address=192.0.2.1")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(TransferEngine.class)
                                    .mainAddress()
                                    .describe())
                            .contains("127.0.0.1");
                });
    }

    @Test
    void anEngineWithoutTheGeneratedKeyCannotWriteToTheApplication() {
        runner.withPropertyValues(LoopbackTransferEngineAutoConfiguration.PROPERTY + "=true")
                .run(context -> {
                    final TransferEngine application = context.getBean(TransferEngine.class);
                    try (Arena arena = Arena.ofShared();
                            TransferEngine stranger = TransferEngine.builder()
                                    .option(
                                            "tcp.clusterKey",
                                            LoopbackClusterKey.generate().base64())
                                    .operationTimeout(Duration.ofSeconds(5))
                                    .build()) {
                        final MemoryRegion inbox = application.register(arena.allocate(4096, 4096), Device.host());

                        StepVerifier.create(
                                        new ReactiveTransferEngine(stranger).write(ImmWrite.of(inbox.descriptor(), 6)))
                                .expectError(TransferEngineException.class)
                                .verify(WAIT);
                        application.deregister(inbox);
                    }
                });
    }

    @Test
    void theKeyNeverPrints() {
        assertThat(LoopbackClusterKey.generate().toString()).doesNotContain("=").contains("32 random bytes");
    }
}
