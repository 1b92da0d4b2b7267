package dev.transferengine.cuda;

import dev.transferengine.Device;
import dev.transferengine.GroupSpec;
import dev.transferengine.MemoryRegion;
import dev.transferengine.PagedRead;
import dev.transferengine.RegionAccess;
import dev.transferengine.Routing;
import dev.transferengine.SingleRead;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.spi.DeviceMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Device memory written between two engines over the tcp transport, staged through pinned host buffers: with the
 * host-backed device memory here, and with real GPU memory where there is one.
 */
class EngineDeviceMemoryTest {

    private static final int SIZE = 3 << 20;
    /** Staging chunks for the reads: a 768 KiB shard comes back in three READ_DATA frames. */
    private static final int STAGING_CHUNK = 256 << 10;

    @Test
    void writeShardedDeviceMemoryBetweenTwoEnginesThroughHostStaging() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            final MemorySegment source = pattern(arena.allocate(SIZE));
            final MemorySegment target = arena.allocate(SIZE);
            transfer(HostBackedDeviceMemory.NAME, source, target);

            assertThat(target.mismatch(source)).isEqualTo(-1);
        }
    }

    @Test
    void writeShardedGpuMemoryBetweenTwoEnginesThroughPinnedStaging() throws Exception {
        assumeTrue(Cuda.isAvailable(), "needs an NVIDIA GPU with libcuda.so.1: " + Cuda.unavailabilityCause());
        final CudaDevice device = CudaDevice.get(0);
        try (DeviceBuffer source = device.allocate(SIZE);
                DeviceBuffer target = device.allocate(SIZE);
                Arena arena = Arena.ofConfined()) {
            final MemorySegment expected = pattern(arena.allocate(SIZE));
            source.copyFromHost(expected);
            target.fill((byte) 0);
            transfer(DeviceMemory.DEFAULT, source.segment(), target.segment());
            final MemorySegment actual = arena.allocate(SIZE);
            target.copyToHost(actual);

            assertThat(actual.mismatch(expected)).isEqualTo(-1);
        }
    }

    @Test
    void readShardedAndPagedDeviceMemoryOfAPeerThroughHostStagingInSeveralChunks() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            final MemorySegment source = pattern(arena.allocate(SIZE));
            final MemorySegment target = arena.allocate(SIZE);
            pull(HostBackedDeviceMemory.NAME, source, target);

            assertThat(target.mismatch(source)).isEqualTo(-1);
        }
    }

    @Test
    void readShardedAndPagedGpuMemoryOfAPeerThroughPinnedStaging() throws Exception {
        assumeTrue(Cuda.isAvailable(), "needs an NVIDIA GPU with libcuda.so.1: " + Cuda.unavailabilityCause());
        final CudaDevice device = CudaDevice.get(0);
        try (DeviceBuffer source = device.allocate(SIZE);
                DeviceBuffer target = device.allocate(SIZE);
                Arena arena = Arena.ofConfined()) {
            final MemorySegment expected = pattern(arena.allocate(SIZE));
            source.copyFromHost(expected);
            target.fill((byte) 0);
            pull(DeviceMemory.DEFAULT, source.segment(), target.segment());
            final MemorySegment actual = arena.allocate(SIZE);
            target.copyToHost(actual);

            assertThat(actual.mismatch(expected)).isEqualTo(-1);
        }
    }

    /**
     * Reads the first half of {@code source} into {@code target} as 2 shards, the second half as 64 KiB pages in
     * reverse order, through 256 KiB staging chunks: each shard's bytes come back in several READ_DATA frames.
     */
    private static void pull(final String provider, final MemorySegment source, final MemorySegment target)
            throws Exception {
        try (TransferEngine owner = engine(provider, STAGING_CHUNK);
                TransferEngine reader = engine(provider, STAGING_CHUNK)) {
            final MemoryRegion from = owner.register(source, Device.cuda(0), RegionAccess.READ_ONLY);
            final MemoryRegion to = reader.register(target, Device.cuda(0));
            reader.submit(new SingleRead(from.descriptor(), 0, SIZE / 2, to, 0, Routing.sharded(2)))
                    .get(30, TimeUnit.SECONDS);
            final int page = 64 << 10;
            final int pages = SIZE / 2 / page;
            final int[] srcPages = new int[pages];
            final int[] dstPages = new int[pages];
            for (int k = 0; k < pages; k++) {
                srcPages[k] = pages - 1 - k;
                dstPages[k] = pages - 1 - k;
            }
            reader.submit(new PagedRead(
                            from.descriptor(), SIZE / 2, page, srcPages, to, SIZE / 2, page, dstPages, page))
                    .get(30, TimeUnit.SECONDS);
        }
    }

    /** Writes all of {@code source} into {@code target} as 2 shards with imm 9; returns once both imms arrived. */
    private static void transfer(final String provider, final MemorySegment source, final MemorySegment target)
            throws Exception {
        try (TransferEngine sender = engine(provider);
                TransferEngine receiver = engine(provider)) {
            final MemoryRegion from = sender.register(source, Device.cuda(0));
            final MemoryRegion to = receiver.register(target, Device.cuda(0));
            sender.submit(SingleWrite.of(from, 0, SIZE, to.descriptor(), 0)
                            .withRouting(Routing.sharded(2))
                            .withImm(9))
                    .get(30, TimeUnit.SECONDS);
            receiver.immCounter(9).await(2, Duration.ofSeconds(30));
        }
    }

    private static TransferEngine engine(final String provider) {
        return TransferEngine.builder()
                .group(GroupSpec.of(2).withCudaDevice(0))
                .option(DeviceMemory.OPTION, provider)
                .build();
    }

    private static TransferEngine engine(final String provider, final int stagingChunkBytes) {
        return TransferEngine.builder()
                .group(GroupSpec.of(2).withCudaDevice(0))
                .option(DeviceMemory.OPTION, provider)
                .option("tcp.stagingChunkBytes", Integer.toString(stagingChunkBytes))
                .build();
    }

    private static MemorySegment pattern(final MemorySegment segment) {
        for (long i = 0; i < segment.byteSize(); i += Long.BYTES) {
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
        }
        return segment;
    }
}
