package dev.transferengine.cuda;

import dev.transferengine.Device;
import dev.transferengine.GroupSpec;
import dev.transferengine.IdleStrategyKind;
import dev.transferengine.MemoryRegion;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.UvmWatcher;
import dev.transferengine.exceptions.TransferEngineException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Engines and watcher services closed while kernels store into their watchers, pollers poll and staged device copies
 * run, round after round: nothing may crash the JVM or fault the GPU, so the context keeps working afterwards.
 */
class CloseMidFlightGpuTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final int ROUNDS = 12;
    /** Increments of one kernel: it runs for a while (each is a PCIe round trip), far past the close. */
    private static final long INCREMENTS = 100_000;

    private CudaDevice device;

    @BeforeEach
    void needsGpu() {
        assumeTrue(Cuda.isAvailable(), "needs an NVIDIA GPU with libcuda.so.1: " + Cuda.unavailabilityCause());
        device = CudaDevice.get(0);
    }

    @Test
    void closeEnginesWhileKernelsStoreIntoTheirWatchersWithoutFaultingTheGpu() {
        try (WatcherKernels kernels = WatcherKernels.load(device)) {
            for (int round = 0; round < ROUNDS; round++) {
                final AtomicLong seen = new AtomicLong();
                final UvmWatcher watcher;
                try (TransferEngine engine = TransferEngine.builder()
                        .group(GroupSpec.of(1).withCudaDevice(0))
                        .idleStrategy(IdleStrategyKind.SPIN)
                        .build()) {
                    watcher = engine.allocUvmWatcher((old, now) -> {
                        seen.set(now);
                        return true;
                    });
                    kernels.increment(watcher.devicePointer(), INCREMENTS);
                    // mid-flight: the kernel stores, the poller polls and the listener runs when the close begins
                    await().atMost(PATIENCE).until(() -> seen.get() > 0);
                }

                assertThat(watcher.isOpen()).isFalse();
                assertThat(watcher.value()).isZero();
                kernels.synchronize(); // throws CUDA_ERROR_ILLEGAL_ADDRESS had the kernel stored into a freed page
            }
            assertContextWorks();
        }
    }

    @Test
    void closeWatcherServicesAndWatchersFromTwoThreadsMidFlight() throws Exception {
        try (WatcherKernels kernels = WatcherKernels.load(device)) {
            for (int round = 0; round < ROUNDS; round++) {
                final AtomicLong seen = new AtomicLong();
                final UvmWatchers watchers =
                        UvmWatchers.open(0, UvmWatchersConfig.defaults().withPollIdle(IdleStrategyKind.SPIN));
                final UvmWatcher watcher = watchers.allocate((old, now) -> {
                    seen.set(now);
                    return true;
                });
                kernels.increment(watcher.devicePointer(), INCREMENTS);
                await().atMost(PATIENCE).until(() -> seen.get() > 0);
                final CompletableFuture<Void> closer = CompletableFuture.runAsync(watcher::close);
                watchers.close();
                closer.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);

                assertThat(watcher.isOpen()).isFalse();
                kernels.synchronize();
            }
            assertContextWorks();
        }
    }

    @Test
    void closeEnginesWhileStagedDeviceWritesAreInFlight() throws Exception {
        final int size = 64 << 20;
        try (DeviceBuffer source = device.allocate(size);
                DeviceBuffer target = device.allocate(size)) {
            source.fill((byte) 0x5A);
            for (int round = 0; round < ROUNDS; round++) {
                final CompletableFuture<Void> write;
                try (TransferEngine receiver = stagingEngine();
                        TransferEngine sender = stagingEngine()) {
                    final MemoryRegion from = sender.register(source.segment(), Device.cuda(0));
                    final MemoryRegion to = receiver.register(target.segment(), Device.cuda(0));
                    write = sender.submit(SingleWrite.of(from, 0, size, to.descriptor(), 0));
                }
                // closed mid-flight: the write ends either way, done or failed with the close as its reason
                try {
                    write.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
                } catch (final ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOf(TransferEngineException.class);
                }
            }
            assertContextWorks();
        }
    }

    private static TransferEngine stagingEngine() {
        return TransferEngine.builder()
                .group(GroupSpec.of(1).withCudaDevice(0))
                .drainTimeout(Duration.ZERO)
                .build();
    }

    /** A GPU fault would have broken the context: every later call would fail. */
    private void assertContextWorks() {
        try (DeviceBuffer buffer = device.allocate(1 << 20);
                Arena arena = Arena.ofConfined()) {
            final MemorySegment out = arena.allocate(1 << 20);
            out.set(ValueLayout.JAVA_LONG, 8, 0x1234_5678_9ABCL);
            final MemorySegment in = arena.allocate(1 << 20);
            buffer.copyFromHost(out);
            buffer.copyToHost(in);
            device.synchronize();

            assertThat(in.mismatch(out)).isEqualTo(-1);
        }
    }
}
