package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.GroupSpec;
import dev.transferengine.IdleStrategyKind;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.transport.fabric.FabricTestAccess;

import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EnginesTest {

    @Test
    void unknownTransportNamesTheKnownOnes() {
        assertThatThrownBy(() ->
                        TransferEngine.builder().transport("carrier-pigeon").build())
                .isInstanceOf(TransportUnavailableException.class)
                .hasMessageContaining("carrier-pigeon")
                .hasMessageContaining("tcp");
    }

    @Test
    void autoFallsBackToTcpWhenNativeTransportsCannotRun() {
        try (TransferEngine engine = TransferEngine.builder()
                .transport("auto")
                .option("fabric.library", "/nonexistent/libfabric.so.1")
                .build()) {
            assertThat(engine.transport()).isEqualTo("tcp");
        }
    }

    @Test
    void autoTakesLibfabricOnlyForRdmaDevicesOrANamedProvider() {
        FabricTestAccess.assumeAvailable("shm");
        try (TransferEngine engine = TransferEngine.builder().transport("auto").build()) {
            assertThat(engine.transport()).as("no EFA or verbs device here").isEqualTo("tcp");
        }
        try (TransferEngine engine = TransferEngine.builder()
                .transport("auto")
                .option("fabric.provider", "shm")
                .build()) {
            assertThat(engine.transport()).isEqualTo("fabric");
        }
    }

    @Test
    void transportsAreListedMostPreferredFirstWithTcpAvailableEverywhere() {
        assertThat(Engines.transports()).extracting(t -> t.name()).contains("tcp");
        assertThat(Engines.transports().getLast().name()).isEqualTo("tcp");
    }

    @Test
    void pinnedSpinningWorkersAndSeveralGroupsMoveData() throws Exception {
        try (TransferEngine a = TransferEngine.builder()
                        .group(GroupSpec.of(2).withWorkerCpu(0))
                        .group(1)
                        .idleStrategy(IdleStrategyKind.SPIN)
                        .build();
                TransferEngine b = TransferEngine.builder()
                        .group(1)
                        .idleStrategy(IdleStrategyKind.YIELD)
                        .build();
                Arena arena = Arena.ofShared()) {
            assertThat(a.groupCount()).isEqualTo(2);
            assertThat(a.nicCount(1)).isEqualTo(1);
            // a region registered on group 1 writes through group 1's worker
            final MemoryRegion src = a.register(arena.allocate(4096), Device.host(), 1);
            final RegionDescriptor dst =
                    b.register(arena.allocate(4096), Device.host()).descriptor();
            a.submit(SingleWrite.of(src, 0, 4096, dst, 0)).get(10, TimeUnit.SECONDS);
            assertThat(a.metrics().counter(1, 0, dev.transferengine.NicCounter.BYTES_WRITTEN))
                    .isEqualTo(4096);
        }
    }
}
