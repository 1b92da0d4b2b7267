package dev.transferengine.bench.jmh;

import dev.transferengine.GroupSpec;
import dev.transferengine.IdleStrategyKind;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.UvmWatcher;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * "GPU store -> UVM watcher listener called" on a real GPU, through the public API: the watcher comes from
 * {@link TransferEngine#allocUvmWatcher}, its listener runs on the engine's callback thread (idle strategy
 * {@code SPIN}), the polling thread is pinned with the engine option {@code uvm.pollCpu}. The GPU side is the bench's
 * own kernels ({@link CudaDriver}). Needs a GPU: without one every benchmark fails at set-up, naming what is missing.
 *
 * <ul>
 *   <li>{@code pingToListener}: a persistent kernel waits for the host to write {@code ping = i} into mapped host
 *       memory, then stores {@code i} into the watcher's slot; from the host's ping until the host sees the value
 *       the listener recorded. An upper bound of store-to-listener: it adds the GPU's PCIe read of the ping
 *       (~0.6-1.8 us).
 *   <li>{@code bareRoundTrip}: the same loop into a plain mapped slot that the host spins on: the round trip to
 *       subtract.
 *   <li>{@code launchToListener}: from before {@code cuLaunchKernel} of a one-store kernel to the listener's value
 *       (JCuda's launch cost included).
 * </ul>
 *
 * The old {@code main()} version also pinned the host and callback threads to CPUs; the public API pins only the
 * polling thread, and JMH's thread stays where the scheduler puts it.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class UvmWatcherLatencyBenchmark {

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    /** How long the host waits for one answer before it calls the kernel lost. */
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);
    /** How long a persistent kernel waits for the next ping: it ends this long after an iteration's last one. */
    private static final long KERNEL_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(500);

    private static final long PING = 0;
    private static final long RAW_SLOT = 128;

    /** The GPU, the engine and a page of mapped host memory (the ping and the bare slot). */
    @State(Scope.Benchmark)
    public static class Gpu {

        /** {@code uvm.pollCpu}: the CPU of the watchers' polling thread; empty leaves it unpinned. */
        @Param({"2"})
        public String pollCpu;

        CudaDriver cuda;
        CudaDriver.Kernels kernels;
        CudaDriver.Mapped page;
        TransferEngine engine;

        @Setup(Level.Trial)
        public void open() {
            Gpus.require("UvmWatcherLatencyBenchmark");
            cuda = CudaDriver.open(0);
            kernels = cuda.loadKernels();
            page = cuda.allocMapped(4096);
            final TransferEngineBuilder builder = TransferEngine.builder()
                    .transport("tcp")
                    .group(GroupSpec.of(1).withCudaDevice(0))
                    .idleStrategy(IdleStrategyKind.SPIN);
            if (!pollCpu.isEmpty()) {
                builder.option("uvm.pollCpu", pollCpu);
            }
            engine = builder.build();
        }

        /** Writes {@code ping = i} and spins until {@code seen} shows it. */
        void ping(final long i, final AtomicLong seen) {
            final long start = System.nanoTime();
            LONG.setRelease(page.host(), PING, i);
            while (seen.getAcquire() != i) {
                awaitAnswer(start, "ping", i);
            }
        }

        /**
         * JMH may tear this state down before the states that use it ({@link Launches}): the kernels are waited for
         * first, the engine closes the watchers still open (a later {@code watcher.close()} is a no-op), and only
         * then the stream is destroyed. The old order crashed the JVM in libcuda (SIGSEGV) when {@link Launches}
         * synchronized the stream destroyed here.
         */
        @TearDown(Level.Trial)
        public void close() {
            kernels.synchronize();
            engine.close();
            kernels.close();
            cuda.freeMapped(page);
            cuda.close();
        }
    }

    /** A persistent ping-pong kernel into the bare slot, one per iteration. */
    @State(Scope.Benchmark)
    public static class BareLoop {

        private long i;

        @Setup(Level.Iteration)
        public void start(final Gpu gpu) {
            gpu.page.host().fill((byte) 0);
            i = 0;
            gpu.kernels.pingPong(
                    gpu.page.devicePointer() + PING,
                    gpu.page.devicePointer() + RAW_SLOT,
                    Long.MAX_VALUE,
                    KERNEL_WAIT_NS);
        }

        @TearDown(Level.Iteration)
        public void stop(final Gpu gpu) {
            gpu.kernels.synchronize();
        }
    }

    /** A fresh watcher (slot 0) and a persistent ping-pong kernel into it, one per iteration. */
    @State(Scope.Benchmark)
    public static class WatchedLoop {

        final AtomicLong seen = new AtomicLong();
        private UvmWatcher watcher;
        private long i;

        @Setup(Level.Iteration)
        public void start(final Gpu gpu) {
            LONG.setRelease(gpu.page.host(), PING, 0L);
            seen.set(0);
            i = 0;
            watcher = gpu.engine.allocUvmWatcher((old, now) -> {
                seen.setRelease(now);
                return true;
            });
            gpu.kernels.pingPong(
                    gpu.page.devicePointer() + PING, watcher.devicePointer(), Long.MAX_VALUE, KERNEL_WAIT_NS);
        }

        @TearDown(Level.Iteration)
        public void stop(final Gpu gpu) {
            gpu.kernels.synchronize();
            watcher.close();
        }
    }

    /** One watcher for the trial; each launch stores the next value. */
    @State(Scope.Benchmark)
    public static class Launches {

        final AtomicLong seen = new AtomicLong();
        private UvmWatcher watcher;
        private long i;

        @Setup(Level.Trial)
        public void open(final Gpu gpu) {
            watcher = gpu.engine.allocUvmWatcher((old, now) -> {
                seen.setRelease(now);
                return true;
            });
        }

        /** Every launch was waited for by its benchmark call; {@link Gpu#close} may have run before this. */
        @TearDown(Level.Trial)
        public void close() {
            watcher.close();
        }
    }

    /** Host ping -> kernel store into a plain mapped slot -> host sees it. */
    @Benchmark
    public void bareRoundTrip(final Gpu gpu, final BareLoop loop) {
        final long i = ++loop.i;
        final MemorySegment host = gpu.page.host();
        final long start = System.nanoTime();
        LONG.setRelease(host, PING, i);
        while ((long) LONG.getAcquire(host, RAW_SLOT) != i) {
            awaitAnswer(start, "ping", i);
        }
    }

    /** Host ping -> kernel store into the watcher's slot -> polling thread -> listener on the callback thread. */
    @Benchmark
    public void pingToListener(final Gpu gpu, final WatchedLoop loop) {
        gpu.ping(++loop.i, loop.seen);
    }

    /** cuLaunchKernel of one store into the watcher's slot -> listener. */
    @Benchmark
    public void launchToListener(final Gpu gpu, final Launches launches) {
        final long i = ++launches.i;
        final long start = System.nanoTime();
        gpu.kernels.store(launches.watcher.devicePointer(), i);
        while (launches.seen.getAcquire() != i) {
            awaitAnswer(start, "store", i);
        }
    }

    /** Spins once; fails once the answer to {@code what} number {@code i} is 5 s late. */
    private static void awaitAnswer(final long start, final String what, final long i) {
        if (System.nanoTime() - start > TIMEOUT_NS) {
            throw new IllegalStateException(
                    "no answer to " + what + " " + i + " within 5 s: the kernel ended or the watcher"
                            + " stopped (a host pause over " + TimeUnit.NANOSECONDS.toMillis(KERNEL_WAIT_NS)
                            + " ms ends the persistent kernel)");
        }
        Thread.onSpinWait();
    }
}
