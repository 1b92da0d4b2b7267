package dev.transferengine.core;

import dev.transferengine.BarrierWrite;
import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionAccess;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.ScatterTarget;
import dev.transferengine.ScatterWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.exceptions.RegionBoundsException;
import dev.transferengine.exceptions.RemoteAccessException;

import java.lang.foreign.Arena;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A request's checks name the target they refused by its index (the labels are built only when a check fails, so the
 * messages must still say which target it was).
 */
class RequestChecksTest {

    private final Arena arena = Arena.ofShared();

    @AfterEach
    void closeArena() {
        arena.close();
    }

    @Test
    void aScatterTargetOutOfBoundsIsNamedByItsIndex() {
        try (TransferEngine engine = EngineTest.tcp()) {
            final MemoryRegion src = engine.register(arena.allocate(4096), Device.host());
            final RegionDescriptor dst =
                    engine.register(arena.allocate(4096), Device.host()).descriptor();

            assertThatThrownBy(() -> engine.submit(ScatterWrite.of(
                            src, List.of(new ScatterTarget(dst, 64, 0, 0), new ScatterTarget(dst, 64, 0, 4090)))))
                    .isInstanceOf(RegionBoundsException.class)
                    .hasMessageStartingWith("scatter target 1: 64 bytes at offset 4090");
            assertThatThrownBy(() -> engine.submit(ScatterWrite.of(
                            src, List.of(new ScatterTarget(dst, 64, 0, 0), new ScatterTarget(dst, 64, 4090, 0)))))
                    .isInstanceOf(RegionBoundsException.class)
                    .hasMessageStartingWith("source of scatter target 1: 64 bytes at offset 4090");
        }
    }

    @Test
    void aBarrierDestinationThatRefusesWritesIsNamedByItsIndex() {
        try (TransferEngine engine = EngineTest.tcp()) {
            final RegionDescriptor writable =
                    engine.register(arena.allocate(4096), Device.host()).descriptor();
            final RegionDescriptor readOnly = engine.register(
                            arena.allocate(4096), Device.host(), RegionAccess.READ_ONLY)
                    .descriptor();

            assertThatThrownBy(() -> engine.submit(BarrierWrite.of(List.of(writable, readOnly), 7)))
                    .isInstanceOf(RemoteAccessException.class)
                    .hasMessageStartingWith("NOT_WRITABLE: barrier destination 1 RegionDescriptor");
        }
    }
}
