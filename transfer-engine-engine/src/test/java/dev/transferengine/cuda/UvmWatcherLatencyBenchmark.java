package dev.transferengine.cuda;

import dev.transferengine.IdleStrategyKind;
import dev.transferengine.UvmWatcher;
import dev.transferengine.nativeaccess.CpuAffinity;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * Times "GPU store -> watcher listener called on the callback thread" on a real GPU. A persistent kernel waits for
 * the host to write {@code ping = i}, then stores {@code i} into the slot; the time from the host's ping to the
 * listener call is an upper bound of store-to-listener (it adds the GPU's PCIe read of the ping, ~0.6-1.8 us).
 * The same loop without a watcher (the host spins on the slot itself) gives the bare round trip to subtract.
 *
 * <p>{@code java ... UvmWatcherLatencyBenchmark [iterations=20000] [pollCpu=2] [hostCpu=4] [callbackCpu=6]}. Every
 * spinning thread gets its own CPU: threads inherit their creator's affinity, so an unpinned callback thread
 * started by the pinned host thread would share its CPU and wait for scheduler ticks (4 ms).
 */
public final class UvmWatcherLatencyBenchmark {

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final long TIMEOUT_NS = 5_000_000_000L;
    private static final int WARMUP = 2_000;
    private static final int PING = 0;
    private static final int RAW_SLOT = 128;

    private UvmWatcherLatencyBenchmark() {}

    public static void main(final String[] args) {
        final int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        final int pollCpu = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        final int hostCpu = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        final int callbackCpu = args.length > 3 ? Integer.parseInt(args[3]) : 6;
        final String pinned = CpuAffinity.pinCurrentThread(hostCpu);
        System.out.println("host thread pinned to CPU " + hostCpu + ": " + (pinned == null ? "yes" : pinned));
        final CudaDevice device = CudaDevice.get(0);
        System.out.println("device " + device);
        try (WatcherKernels kernels = WatcherKernels.load(device);
                PinnedBuffer page = device.allocatePinned(4096)) {
            final MemorySegment memory = page.segment();
            for (int round = 0; round < 1; round++) {
                memory.fill((byte) 0);
                final long[] raw = pingPong(
                        kernels,
                        page,
                        page.devicePointer() + RAW_SLOT,
                        iterations,
                        () -> (long) LONG.getAcquire(memory, (long) RAW_SLOT),
                        null);
                System.out.println(Percentiles.summary("round " + round + " bare round trip (host spins)", raw));

                memory.fill((byte) 0);
                final UvmWatchersConfig config = UvmWatchersConfig.defaults()
                        .withPollCpu(pollCpu)
                        .withPollIdle(IdleStrategyKind.SPIN)
                        .withCallbackIdle(IdleStrategyKind.SPIN)
                        .withCallbackCpu(callbackCpu);
                try (UvmWatchers watchers = UvmWatchers.open(0, config)) {
                    final AtomicLong seen = new AtomicLong();
                    final long[] calledAt = new long[iterations + WARMUP + 1];
                    final UvmWatcher watcher = watchers.allocate((o, n) -> {
                        calledAt[(int) n] = System.nanoTime();
                        seen.setRelease(n);
                        return true;
                    });
                    final long[] viaWatcher =
                            pingPong(kernels, page, watcher.devicePointer(), iterations, seen::getAcquire, calledAt);
                    System.out.println(
                            Percentiles.summary("round " + round + " ping -> listener (watcher)", viaWatcher));
                    final long[] launched = launchToListener(kernels, watcher, seen, calledAt);
                    System.out.println(Percentiles.summary("round " + round + " cuLaunchKernel -> listener", launched));
                }
            }
        }
    }

    /** Per iteration: nanoseconds from the host's ping to the moment {@code observed} shows it. */
    private static long[] pingPong(
            final WatcherKernels kernels,
            final PinnedBuffer page,
            final long slot,
            final int iterations,
            final LongSupplier observed,
            final long @Nullable [] calledAt) {
        final MemorySegment memory = page.segment();
        final int total = iterations + WARMUP;
        kernels.pingPong(page.devicePointer() + PING, slot, total, TIMEOUT_NS);
        final long[] samples = new long[iterations];
        for (int i = 1; i <= total; i++) {
            final long start = System.nanoTime();
            LONG.setRelease(memory, (long) PING, (long) i);
            while (observed.getAsLong() != i) {
                if (System.nanoTime() - start > TIMEOUT_NS) {
                    throw new IllegalStateException("no answer to ping " + i + " within 5 s");
                }
                Thread.onSpinWait();
            }
            final long end = calledAt == null ? System.nanoTime() : calledAt[i];
            if (i > WARMUP) {
                samples[i - WARMUP - 1] = end - start;
            }
        }
        kernels.synchronize();
        return samples;
    }

    /** Per launch of {@code te_store}: from before cuLaunchKernel to the listener call (JCuda launch cost included). */
    private static long[] launchToListener(
            final WatcherKernels kernels, final UvmWatcher watcher, final AtomicLong seen, final long[] calledAt) {
        final int count = Math.min(2_000, calledAt.length - 1);
        final long[] samples = new long[count];
        for (int i = 1; i <= count; i++) {
            final long start = System.nanoTime();
            kernels.store(watcher.devicePointer(), i);
            while (seen.getAcquire() != i) {
                if (System.nanoTime() - start > TIMEOUT_NS) {
                    throw new IllegalStateException("no listener call for store " + i + " within 5 s");
                }
                Thread.onSpinWait();
            }
            samples[i - 1] = calledAt[i] - start;
        }
        kernels.synchronize();
        return samples;
    }
}
