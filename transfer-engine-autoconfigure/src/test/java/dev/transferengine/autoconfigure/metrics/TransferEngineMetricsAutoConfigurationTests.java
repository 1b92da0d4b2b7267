package dev.transferengine.autoconfigure.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.ReactiveTransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.lang.foreign.Arena;
import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class TransferEngineMetricsAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(TransferEngineAutoConfiguration.class,
            ReactiveTransferEngineAutoConfiguration.class, TransferEngineMetricsAutoConfiguration.class));

    @Test
    void bindRegistersEveryMeterOnceWithNicTags() {
        runner.withPropertyValues("transfer-engine.groups[0].nics=2").run(context -> {
            final MeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(TransferEngineMeterBinder.class).bindTo(registry);

            assertThat(registry.get("transfer.engine.bytes").tags("nic", "0.1", "direction", "in").functionCounter()
                .count()).isZero();
            assertThat(registry.get("transfer.engine.bytes").functionCounters()).hasSize(4);
            assertThat(registry.get("transfer.engine.operations").tags("op", "write", "outcome", "success")
                .functionCounter()).isNotNull();
            assertThat(registry.get("transfer.engine.errors").tag("kind", "timeout").functionCounter()).isNotNull();
            assertThat(registry.get("transfer.engine.imm.events").functionCounters()).hasSize(2);
            assertThat(registry.get("transfer.engine.write.latency").functionTimer().count()).isZero();
            assertThat(registry.get("transfer.engine.in.flight").gauge().value()).isZero();
            assertThat(registry.get("transfer.engine.peers").tag("state", "unreachable").gauge().value()).isZero();
            assertThat(registry.get("transfer.engine.receive.buffers.free").gauge().value()).isZero();
        });
    }

    @Test
    void metersFollowTheEngineCountersAsTransfersHappen() {
        runner.run(context -> {
            final MeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(TransferEngineMeterBinder.class).bindTo(registry);
            final TransferEngine engine = context.getBean(TransferEngine.class);
            try (TransferEngine peer = TransferEngine.builder().build(); Arena arena = Arena.ofShared()) {
                final MemoryRegion source = engine.register(arena.allocate(16384, 4096), Device.host());
                final MemoryRegion target = peer.register(arena.allocate(16384, 4096), Device.host());
                context.getBean(ReactiveTransferEngine.class)
                    .write(SingleWrite.of(source, 0, 16384, target.descriptor(), 0))
                    .block(Duration.ofSeconds(30));
            }

            assertThat(registry.get("transfer.engine.bytes").tags("nic", "0.0", "direction", "out").functionCounter()
                .count()).isEqualTo(16384);
            assertThat(registry.get("transfer.engine.operations").tags("op", "write", "outcome", "success")
                .functionCounter().count()).isEqualTo(1);
            assertThat(registry.get("transfer.engine.write.latency").functionTimer().count()).isEqualTo(1);
        });
    }

    @Test
    void runWithoutMicrometerCreatesNoBinder() {
        runner.withClassLoader(new FilteredClassLoader(MeterBinder.class))
            .run(context -> assertThat(context).hasSingleBean(TransferEngine.class)
                .doesNotHaveBean(TransferEngineMeterBinder.class));
    }

    @Test
    void runWithoutAnEngineCreatesNoBinder() {
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TransferEngineMetricsAutoConfiguration.class))
            .run(context -> assertThat(context).doesNotHaveBean(TransferEngineMeterBinder.class));
    }
}
