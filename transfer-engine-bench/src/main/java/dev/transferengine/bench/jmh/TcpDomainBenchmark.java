package dev.transferengine.bench.jmh;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.WriteDescriptor;
import dev.transferengine.test.Domains;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

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
 * One tcp domain pair over loopback, below the engine (SPI only): the initiator is driven by the benchmark thread,
 * the target by a thread of its own that only polls, as two workers would. Idle loops yield the core.
 *
 * <ul>
 *   <li>{@code write}: keeps {@code window} writes of {@code size} bytes with imm in flight, cycling through
 *       {@code span} bytes of source and target region ({@code span = size} keeps the memory cache-hot, as iperf3
 *       does); the score is writes/s, the {@code bytes} row bytes/s.
 *   <li>{@code immRoundTrip}: one imm-only write at a time, post to completion (the target's ACK), sampled.
 * </ul>
 *
 * {@code -p socketBufferBytes=N} passes the tcp option {@code tcp.socketBufferBytes} (empty keeps its default),
 * {@code -p options=key=value;key=value} any others.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class TcpDomainBenchmark {

    private static final long REGION = 64L << 20;

    /** The two domains; every benchmark of this class uses them. */
    @State(Scope.Benchmark)
    public static class Pair {

        /** {@code tcp.socketBufferBytes}; empty keeps the transport's default. */
        @Param({""})
        public String socketBufferBytes;

        /** More transport options, {@code key=value;key=value}. */
        @Param({""})
        public String options;

        final CountingListener events = new CountingListener();
        /** Reused for every post, as a worker does: the domain copies what it keeps. */
        final WriteDescriptor op = new WriteDescriptor();

        Arena arena;
        Target target;
        Domain domain;
        MemorySegment source;
        long sourceKey;
        long peer;
        long posted;

        @Setup(Level.Trial)
        @SuppressWarnings("MustBeClosedChecker") // the state owns the arena; the trial's tear-down closes it
        public void open() throws Exception {
            final Map<String, String> all = Domains.options(
                    socketBufferBytes.isEmpty() ? Map.of() : Map.of("tcp.socketBufferBytes", socketBufferBytes),
                    options);
            target = Target.start(all);
            arena = Arena.ofShared();
            domain = Domains.open("tcp", all, events);
            source = arena.allocate(REGION, 4096).fill((byte) 7);
            sourceKey = domain.register(source, Device.host());
            peer = domain.resolve(target.address);
        }

        void post(final long offset, final long length) {
            domain.write(op.token(posted)
                    .source(source, offset, sourceKey, length)
                    .target(peer, 0, offset, target.rkey)
                    .imm(true, (int) posted));
            posted++;
        }

        @TearDown(Level.Trial)
        public void close() throws Exception {
            try {
                events.drain(posted, domain);
            } finally {
                domain.close();
                target.stop();
                arena.close();
            }
        }
    }

    /** The window of {@code write}. */
    @State(Scope.Benchmark)
    public static class Window {

        /** Bytes per write. */
        @Param({"65536", "1048576"})
        public long size;

        /** Writes in flight. */
        @Param({"64"})
        public int window;

        /** Bytes of source and target the writes cycle through (at most 64 MiB). */
        @Param({"67108864"})
        public long span;

        long slots;

        @Setup(Level.Trial)
        public void check() {
            slots = Math.min(span, REGION) / size;
            if (slots < 1) {
                throw new IllegalArgumentException("span " + span + " must hold at least one write of " + size);
            }
        }
    }

    /** One write of {@code size} bytes with imm, posted once fewer than {@code window} are in flight. */
    @Benchmark
    public void write(final Pair pair, final Window window, final BytesMoved moved) {
        while (pair.posted - pair.events.done >= window.window) {
            idle(pair.domain.poll());
        }
        pair.post((pair.posted % window.slots) * window.size, window.size);
        moved.bytes += window.size;
    }

    /** One imm-only write, from post to its completion. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void immRoundTrip(final Pair pair) {
        final long before = pair.events.done;
        pair.post(0, 0);
        while (pair.events.done == before) {
            pair.domain.poll();
        }
    }

    /** Gives the core away when there was nothing to do, as the engine's idle strategies do. */
    @SuppressWarnings("ThreadPriorityCheck") // yielding is the point: two spinning threads share the cores
    static void idle(final int work) {
        if (work == 0) {
            Thread.yield();
        }
    }

    /** The target NIC on a thread of its own, which opens it, polls it until stopped and closes it. */
    static final class Target {

        final NetworkAddress address;
        final long rkey;
        private final Thread thread;
        private volatile boolean running = true;

        private Target(final NetworkAddress address, final long rkey, final Thread thread) {
            this.address = address;
            this.rkey = rkey;
            this.thread = thread;
        }

        static Target start(final Map<String, String> options) throws Exception {
            final CompletableFuture<Target> started = new CompletableFuture<>();
            final Thread thread = new Thread(() -> run(options, started), "tcp-target");
            thread.setDaemon(true);
            thread.start();
            return started.get(30, TimeUnit.SECONDS);
        }

        private static void run(final Map<String, String> options, final CompletableFuture<Target> started) {
            try (Arena arena = Arena.ofConfined();
                    Domain domain = Domains.open("tcp", options, new CountingListener())) {
                final long rkey = domain.register(arena.allocate(REGION, 4096), Device.host());
                final Target target = new Target(domain.address(), rkey, Thread.currentThread());
                started.complete(target);
                while (target.running) {
                    idle(domain.poll());
                }
            } catch (final RuntimeException | Error e) {
                started.completeExceptionally(e);
                throw e;
            }
        }

        void stop() throws InterruptedException {
            running = false;
            thread.join(TimeUnit.SECONDS.toMillis(30));
        }
    }
}
