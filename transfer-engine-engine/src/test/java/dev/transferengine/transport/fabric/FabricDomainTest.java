package dev.transferengine.transport.fabric;

import static org.assertj.core.api.Assertions.assertThat;

import dev.transferengine.Device;
import dev.transferengine.spi.Domain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FabricDomainTest {

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        fixture.close();
        arena.close();
    }

    private MemorySegment pattern(final long size, final int seed) {
        final MemorySegment segment = arena.allocate(size, 4096);
        for (long i = 0; i < size; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
        return segment;
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void writeWithImmPlacesBytesAndDeliversTheImm(final String provider) {
        FabricFixture.assumeAvailable(provider);
        final FabricFixture.Recorder a = new FabricFixture.Recorder();
        final FabricFixture.Recorder b = new FabricFixture.Recorder();
        final Domain initiator = fixture.open(provider, 0, a);
        final Domain target = fixture.open(provider, 0, b);
        final MemorySegment src = pattern(1 << 20, 7);
        final MemorySegment dst = arena.allocate(1 << 20, 4096);
        final long srcKey = initiator.register(src, Device.host());
        final long dstKey = target.register(dst, Device.host());
        final long peer = initiator.resolve(target.address());

        initiator.write(1, src, 0, srcKey, 1 << 20, peer, dst.address(), 0, dstKey, true, 0xCAFE_BABE);
        fixture.pollUntil(() -> a.writeEnded(1) && !b.imms.isEmpty());

        assertThat(a.writesFailed).isEmpty();
        assertThat(a.writesDone).containsEntry(1L, (long) (1 << 20));
        assertThat(b.imms).containsExactly(0xCAFE_BABE);
        assertThat(dst.mismatch(src)).isEqualTo(-1);
    }
}
