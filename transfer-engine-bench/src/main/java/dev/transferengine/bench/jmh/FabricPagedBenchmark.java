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
 * Paged writes between two libfabric domains of one process, below the engine (SPI only), driven by the benchmark
 * thread: each invocation posts one request of {@code pages} 1 KiB writes with imm, all with the request's token
 * (as the engine plans a paged write; shm chains a request's writes, see the fabric transport), once fewer than 16
 * requests are in flight. The score is requests/s, the {@code pages} row pages/s. The
 * initiator is polled on every pass, the target on every pass or only every {@code targetEveryMicros} (a target whose
 * worker parks). {@code postsPerPoll} is the transport's {@code fabric.postsPerPoll}; {@code options} adds others.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class FabricPagedBenchmark {

    private static final long PAGE = 1024;
    private static final int WINDOW = 16;

    /** The libfabric provider. */
    @Param({"shm", "tcp"})
    public String provider;

    /** Pages per request. */
    @Param({"256"})
    public int pages;

    /** How often the target is polled: 0 on every pass. */
    @Param({"0"})
    public long targetEveryMicros;

    /** {@code fabric.postsPerPoll}. */
    @Param({"32"})
    public String postsPerPoll;

    /** More transport options, {@code key=value;key=value}, e.g. {@code fabric.library=PATH} for another build. */
    @Param({""})
    public String options;

    private final CountingListener a = new CountingListener();
    private final CountingListener b = new CountingListener();
    /** Reused for every post, as a worker does: the domain copies what it keeps. */
    private final WriteDescriptor op = new WriteDescriptor();

    private Arena arena;
    private Domain left;
    private Domain right;
    private MemorySegment src;
    private MemorySegment dst;
    private long srcKey;
    private long dstKey;
    private long toRight;
    private long targetEveryNanos;
    private long lastTarget;
    private long posted;

    @Setup(Level.Trial)
    @SuppressWarnings("MustBeClosedChecker") // the state owns the arena; the trial's tear-down closes it
    public void open() {
        if (pages < 1) {
            throw new IllegalArgumentException("pages must be >= 1, was " + pages);
        }
        final Map<String, String> all =
                Domains.options(Map.of("fabric.provider", provider, "fabric.postsPerPoll", postsPerPoll), options);
        arena = Arena.ofShared();
        left = Domains.open("fabric", all, a);
        right = Domains.open("fabric", all, b);
        final long bytes = PAGE * pages * WINDOW;
        src = arena.allocate(bytes, 4096);
        dst = arena.allocate(bytes, 4096);
        srcKey = left.register(src, Device.host());
        dstKey = right.register(dst, Device.host());
        toRight = left.resolve(right.address());
        targetEveryNanos = TimeUnit.MICROSECONDS.toNanos(targetEveryMicros);
        lastTarget = System.nanoTime();
    }

    /** One request of {@code pages} writes with imm. */
    @Benchmark
    public void pagedRequest(final PagesWritten written) {
        while (posted - a.done >= (long) pages * (WINDOW - 1)) {
            left.poll();
            final long now = System.nanoTime();
            if (now - lastTarget >= targetEveryNanos) {
                right.poll();
                lastTarget = now;
            }
        }
        final long slot = (posted / pages) % WINDOW;
        for (int k = 0; k < pages; k++) {
            final long offset = (slot * pages + k) * PAGE;
            left.write(op.token(posted / pages)
                    .source(src, offset, srcKey, PAGE)
                    .target(toRight, dst.address(), offset, dstKey)
                    .imm(true, 7));
        }
        posted += pages;
        written.pages += pages;
    }

    @TearDown(Level.Trial)
    public void close() {
        try {
            a.drain(posted, left, right);
        } finally {
            right.close();
            left.close();
            arena.close();
        }
    }
}
