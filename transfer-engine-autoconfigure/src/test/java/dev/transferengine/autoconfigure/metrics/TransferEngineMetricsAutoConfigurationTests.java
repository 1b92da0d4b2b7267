package dev.transferengine.autoconfigure.metrics;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.ReactiveTransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

class TransferEngineMetricsAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    TransferEngineAutoConfiguration.class,
                    ReactiveTransferEngineAutoConfiguration.class,
                    TransferEngineMetricsAutoConfiguration.class));

    @Test
    void bindRegistersEveryMeterOnceWithNicTags() {
        runner.withPropertyValues("transfer-engine.groups[0].nics=2").run(context -> {
            final MeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(TransferEngineMeterBinder.class).bindTo(registry);

            assertThat(registry.get("transfer.engine.bytes")
                            .tags("engine", "transferEngine", "nic", "0.1", "direction", "in")
                            .functionCounter()
                            .count())
                    .isZero();
            assertThat(registry.get("transfer.engine.bytes").functionCounters())
                    .hasSize(4)
                    .allSatisfy(meter -> assertThat(meter.getId().getBaseUnit()).isEqualTo("bytes"));
            assertThat(registry.get("transfer.engine.nic.work.requests").functionCounters())
                    .hasSize(6);
            assertThat(registry.get("transfer.engine.operations")
                            .tags("kind", "write", "outcome", "success")
                            .functionCounter())
                    .isNotNull();
            assertThat(registry.get("transfer.engine.operations")
                            .tags("kind", "send", "outcome", "failure")
                            .functionCounter())
                    .isNotNull();
            assertThat(registry.get("transfer.engine.errors")
                            .tag("kind", "timeout")
                            .functionCounter())
                    .isNotNull();
            assertThat(registry.get("transfer.engine.imm.events").functionCounters())
                    .hasSize(2);
            assertThat(registry.get("transfer.engine.in.flight").gauge().value())
                    .isZero();
            assertThat(registry.get("transfer.engine.peers")
                            .tag("state", "unreachable")
                            .gauge()
                            .value())
                    .isZero();
            assertThat(registry.get("transfer.engine.receive.buffers").gauge().value())
                    .isZero();
            assertThat(registry.find("transfer.engine.latency").timers())
                    .as("created as operations end")
                    .isEmpty();
            assertThat(registry.getMeters())
                    .allSatisfy(meter -> assertThat(meter.getId().getBaseUnit())
                            .as(meter.getId().getName())
                            .isIn(null, "bytes"));
        });
    }

    @Test
    void metersFollowTheEngineCountersAsTransfersHappen() {
        runner.run(context -> {
            final MeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(TransferEngineMeterBinder.class).bindTo(registry);
            final TransferEngine engine = context.getBean(TransferEngine.class);
            try (TransferEngine peer = TransferEngine.builder().build();
                    Arena arena = Arena.ofShared()) {
                final MemoryRegion source = engine.register(arena.allocate(16384, 4096), Device.host());
                final MemoryRegion target = peer.register(arena.allocate(16384, 4096), Device.host());
                context.getBean(ReactiveTransferEngine.class)
                        .write(SingleWrite.of(source, 0, 16384, target.descriptor(), 0))
                        .block(Duration.ofSeconds(30));
            }

            assertThat(registry.get("transfer.engine.bytes")
                            .tags("nic", "0.0", "direction", "out")
                            .functionCounter()
                            .count())
                    .isEqualTo(16384);
            assertThat(registry.get("transfer.engine.operations")
                            .tags("kind", "write", "outcome", "success")
                            .functionCounter()
                            .count())
                    .isEqualTo(1);
            assertThat(registry.get("transfer.engine.operations")
                            .tags("kind", "send", "outcome", "success")
                            .functionCounter()
                            .count())
                    .isZero();
            // timers are fed on the engine's callback thread, possibly just after the write's own completion
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(registry.get("transfer.engine.latency")
                                    .tags("engine", "transferEngine", "kind", "write", "outcome", "success")
                                    .timer()
                                    .count())
                            .isEqualTo(1));
        });
    }

    @Test
    void aPeerWithAnotherClusterKeyIsCountedAsAFailedHandshakeByReason() {
        runner.run(context -> {
            final MeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(TransferEngineMeterBinder.class).bindTo(registry);
            final TransferEngine engine = context.getBean(TransferEngine.class);
            try (TransferEngine stranger = TransferEngine.builder()
                            .option("tcp.clusterKey", "fDcM/kernwIFimR1BCBL/293dWjrI1qAdgaEJqYZS9k=")
                            .build();
                    Arena arena = Arena.ofShared()) {
                // The connecting side checks the acceptor's proof first, and counts before it fails the write.
                final MemoryRegion source = engine.register(arena.allocate(64), Device.host());
                final MemoryRegion target = stranger.register(arena.allocate(64), Device.host());
                assertThatThrownBy(() -> engine.submit(SingleWrite.of(source, 0, 64, target.descriptor(), 0))
                                .get(30, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(PeerUnreachableException.class);
            }

            assertThat(registry.get("transfer.engine.handshakes.failed")
                            .tags("engine", "transferEngine", "reason", "auth")
                            .functionCounter()
                            .count())
                    .isEqualTo(1);
            assertThat(registry.get("transfer.engine.refusals")
                            .tag("reason", "unknown_key")
                            .functionCounter()
                            .count())
                    .isZero();
            assertThat(registry.get("transfer.engine.handshakes.failed").functionCounters())
                    .extracting(meter -> meter.getId().getTag("reason"))
                    .contains("version", "auth", "malformed", "timeout", "tls", "closed");
        });
    }

    @Test
    void everyEngineOfTheContextHasItsMetersTaggedByBeanName() {
        runner.withUserConfiguration(TwoEngines.class).run(context -> {
            final MeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(TransferEngineMeterBinder.class).bindTo(registry);

            assertThat(registry.get("transfer.engine.in.flight").gauges())
                    .extracting(gauge -> gauge.getId().getTag("engine"))
                    .containsExactlyInAnyOrder("prefillEngine", "decodeEngine");
            assertThat(registry.get("transfer.engine.imm.events")
                            .tag("engine", "decodeEngine")
                            .functionCounters())
                    .hasSize(2);
        });
    }

    @Test
    void latencySloBucketsAndThePeerTagCapComeFromProperties() {
        runner.withPropertyValues(
                        "transfer-engine.metrics.latency-slo=100us,5ms", "transfer-engine.metrics.max-peer-tags=3")
                .run(context -> {
                    final TransferEngineMeterBinder binder = context.getBean(TransferEngineMeterBinder.class);
                    assertThat(binder)
                            .extracting("latencySlo")
                            .asInstanceOf(InstanceOfAssertFactories.LIST)
                            .containsExactly(Duration.ofNanos(100_000), Duration.ofMillis(5));
                    assertThat(binder).extracting("maxPeerTags").isEqualTo(3);
                });
    }

    @Test
    void byDefaultTheLatencyHistogramHasADozenBucketsAndEachSecurityCounterItsOwnHelpText() {
        runner.run(context -> {
            final TransferEngineMeterBinder binder = context.getBean(TransferEngineMeterBinder.class);
            assertThat(binder)
                    .extracting("latencySlo")
                    .asInstanceOf(InstanceOfAssertFactories.LIST)
                    .hasSize(14)
                    .startsWith(Duration.ofNanos(10_000))
                    .endsWith(Duration.ofSeconds(10));
            final MeterRegistry registry = new SimpleMeterRegistry();
            binder.bindTo(registry);

            final Set<String> descriptions = new HashSet<>();
            for (final String category : List.of("handshakes.failed", "refusals", "connections.closed")) {
                final String description = registry.get("transfer.engine." + category)
                        .functionCounters()
                        .iterator()
                        .next()
                        .getId()
                        .getDescription();
                assertThat(description).isNotBlank();
                descriptions.add(description);
            }
            assertThat(descriptions).hasSize(3);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoEngines {

        @Bean(destroyMethod = "close")
        TransferEngine prefillEngine() {
            return TransferEngine.builder().build();
        }

        @Bean(destroyMethod = "close")
        TransferEngine decodeEngine() {
            return TransferEngine.builder().group(2).build();
        }
    }

    @Test
    void runWithoutMicrometerCreatesNoBinder() {
        runner.withClassLoader(new FilteredClassLoader(MeterBinder.class)).run(context -> assertThat(context)
                .hasSingleBean(TransferEngine.class)
                .doesNotHaveBean(TransferEngineMeterBinder.class));
    }

    @Test
    void runWithoutAnEngineCreatesNoBinder() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(TransferEngineMetricsAutoConfiguration.class))
                .run(context -> assertThat(context).doesNotHaveBean(TransferEngineMeterBinder.class));
    }
}
