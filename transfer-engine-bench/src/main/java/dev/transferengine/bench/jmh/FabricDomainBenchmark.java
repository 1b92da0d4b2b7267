package dev.transferengine.bench.jmh;

import dev.transferengine.Device;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.WriteDescriptor;
import dev.transferengine.test.Domains;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
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
 * Two libfabric domains of one process, below the engine (SPI only), both driven by the benchmark thread (manual
 * progress: both sides need polling).
 *
 * <ul>
 *   <li>{@code writeWithImm}: writes of {@code size} bytes with imm, {@code window} in flight; the score is
 *       writes/s, the {@code bytes} row bytes/s.
 *   <li>{@code immPingPong}: an 8-byte write with imm one way, then one back once it landed: the round trip
 *       (one way is half).
 * </ul>
 *
 * {@code -p provider=shm,tcp} picks the libfabric provider, {@code -p deliveryComplete=false} the completion level,
 * {@code -p options=fabric.library=PATH} another libfabric build.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class FabricDomainBenchmark {

    /** Largest write; source and target regions are this big. */
    private static final long REGION = 1 << 20;

    /** The two domains and their regions. */
    @State(Scope.Benchmark)
    public static class Pair {

        /** The libfabric provider. */
        @Param({"shm", "tcp"})
        public String provider;

        /** {@code fabric.deliveryComplete}. */
        @Param({"true"})
        public String deliveryComplete;

        /** More transport options, {@code key=value;key=value}, e.g. {@code fabric.library=PATH} for another build. */
        @Param({""})
        public String options;

        final CountingListener a = new CountingListener();
        final CountingListener b = new CountingListener();
        /** Reused for every post, as a worker does: the domain copies what it keeps. */
        final WriteDescriptor op = new WriteDescriptor();

        Arena arena;
        Domain left;
        Domain right;
        MemorySegment src;
        MemorySegment dst;
        long srcKey;
        long dstKey;
        long leftKey;
        long rightKey;
        long toRight;
        long toLeft;
        /** Writes posted by the left domain, and by the right one (the ping-pong's answers). */
        long posted;

        long rightPosted;

        @Setup(Level.Trial)
        @SuppressWarnings("MustBeClosedChecker") // the state owns the arena; the trial's tear-down closes it
        public void open() {
            final Map<String, String> all = Domains.options(
                    Map.of("fabric.provider", provider, "fabric.deliveryComplete", deliveryComplete), options);
            arena = Arena.ofShared();
            left = Domains.open("fabric", all, a);
            right = Domains.open("fabric", all, b);
            src = arena.allocate(REGION, 4096);
            dst = arena.allocate(REGION, 4096);
            srcKey = left.register(src, Device.host());
            dstKey = right.register(dst, Device.host());
            leftKey = left.register(dst, Device.host());
            rightKey = right.register(src, Device.host());
            toRight = left.resolve(right.address());
            toLeft = right.resolve(left.address());
        }

        @TearDown(Level.Trial)
        public void close() {
            try {
                a.drain(posted, left, right);
                b.drain(rightPosted, left, right);
            } finally {
                right.close();
                left.close();
                arena.close();
            }
        }
    }

    /** The window of {@code writeWithImm}. */
    @State(Scope.Benchmark)
    public static class Window {

        /** Bytes per write (at most 1 MiB); every write goes to the start of the target region. */
        @Param({"1048576"})
        public long size;

        /** Writes in flight. */
        @Param({"64"})
        public int window;

        @Setup(Level.Trial)
        public void check() {
            if (size < 1 || size > REGION) {
                throw new IllegalArgumentException("size must be 1.." + REGION + ", was " + size);
            }
        }
    }

    /** One write with imm, posted once fewer than {@code window} are in flight. */
    @Benchmark
    public void writeWithImm(final Pair p, final Window w, final BytesMoved moved) {
        while (p.posted - p.a.done >= w.window) {
            p.left.poll();
            p.right.poll();
        }
        p.left.write(p.op.token(p.posted)
                .source(p.src, 0, p.srcKey, w.size)
                .target(p.toRight, p.dst.address(), 0, p.dstKey)
                .imm(true, (int) p.posted));
        p.posted++;
        moved.bytes += w.size;
    }

    /** 8 bytes with imm left to right, then right to left once it landed. */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void immPingPong(final Pair p) {
        final long token = p.posted;
        final long leftImms = p.a.imms;
        final long rightImms = p.b.imms;
        p.left.write(p.op.token(token)
                .source(p.src, 0, p.srcKey, 8)
                .target(p.toRight, p.dst.address(), 0, p.dstKey)
                .imm(true, (int) token));
        p.posted++;
        while (p.b.imms == rightImms) {
            p.left.poll();
            p.right.poll();
        }
        p.right.write(p.op.token(token)
                .source(p.src, 0, p.rightKey, 8)
                .target(p.toLeft, p.dst.address(), 0, p.leftKey)
                .imm(true, (int) token));
        p.rightPosted++;
        while (p.a.imms == leftImms) {
            p.right.poll();
            p.left.poll();
        }
    }
}
