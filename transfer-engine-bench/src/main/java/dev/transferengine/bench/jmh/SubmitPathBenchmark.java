package dev.transferengine.bench.jmh;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.PagedWrite;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.Routing;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.WriteRequest;
import dev.transferengine.test.Domains;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The submit path between two engines in this JVM: each invocation submits one request with a
 * {@link TransferCounters} completion (no callback) and keeps at most {@link #WINDOW} in flight. Run with
 * {@code -prof gc}: {@code gc.alloc.rate.norm} is the steady-state allocation per operation (per write, per page),
 * of every thread (the caller, both workers and the callback thread), since the engine's work happens on its own
 * threads. {@code -p transport=instant} runs on {@link dev.transferengine.test.InstantTransport} (from transfer-engine-test), whose NICs complete every write at once:
 * the engine's own posting rate (one worker), with no transport behind it; {@code tcp} (default) over loopback.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class SubmitPathBenchmark {

    /** Requests in flight at most; enough to keep the workers busy, far below the queue capacity. */
    static final int WINDOW = 64;

    private static final int SLOTS = 64;
    private static final int PAGE = 1024;
    private static final int PAGES = 256;

    /** Bytes per single write. */
    @Param({"4096"})
    public long size;

    /** {@code tcp}, {@code instant} (the engine alone: writes complete at the posting boundary) or {@code fabric}. */
    @Param({"tcp"})
    public String transport;

    /** NICs per engine; single writes are sharded over all of them. */
    @Param({"1"})
    public int nics;

    /**
     * Transport options for both engines, {@code key=value;key=value}: e.g. {@code fabric.provider=shm} and
     * {@code fabric.library=PATH} with {@code -p transport=fabric}.
     */
    @Param({""})
    public String options;

    private Arena arena;
    private TransferEngine sender;
    private TransferEngine receiver;
    private WriteRequest[] singles;
    private WriteRequest[] paged;
    private TransferCounters counters;
    private long submitted;

    @Setup(Level.Trial)
    @SuppressWarnings("MustBeClosedChecker") // the benchmark state owns the arena; the trial's tear-down closes it
    public void open() {
        arena = Arena.ofShared();
        sender = engine();
        receiver = engine();
        final long region = Math.max(SLOTS * size, (long) SLOTS * PAGES * PAGE);
        final MemoryRegion src = sender.register(arena.allocate(region, 4096), Device.host());
        final RegionDescriptor dst =
                receiver.register(arena.allocate(region, 4096), Device.host()).descriptor();
        receiver.immCounter(1);
        singles = new WriteRequest[SLOTS];
        paged = new WriteRequest[SLOTS];
        for (int s = 0; s < SLOTS; s++) {
            final long offset = s * size;
            singles[s] = new SingleWrite(src, offset, size, dst, offset, Routing.sharded(nics), OptionalInt.of(1));
            final int[] pages = new int[PAGES];
            for (int k = 0; k < PAGES; k++) {
                pages[k] = s * PAGES + k;
            }
            paged[s] = PagedWrite.of(src, dst, PAGE, pages).withImm(1);
        }
        counters = new TransferCounters();
    }

    private TransferEngine engine() {
        final TransferEngineBuilder builder =
                TransferEngine.builder().transport(transport).group(nics).submitQueueCapacity(1024);
        Domains.options(Map.of(), options).forEach(builder::option);
        return builder.build();
    }

    /** One single write of {@link #size} bytes. */
    @Benchmark
    public void singleWrite() {
        submit(singles);
    }

    /** One paged write of 256 pages of 1 KiB (one imm per page at the receiver); the score counts pages. */
    @Benchmark
    @OperationsPerInvocation(PAGES)
    public void pagedWrite() {
        submit(paged);
    }

    private void submit(final WriteRequest[] requests) {
        while (submitted - counters.completed() >= WINDOW) {
            Thread.onSpinWait();
        }
        sender.submit(requests[(int) (submitted % SLOTS)], counters);
        submitted++;
    }

    @TearDown(Level.Trial)
    public void close() {
        counters.awaitCompleted(submitted, Duration.ofSeconds(30));
        if (counters.failed() > 0) {
            throw new IllegalStateException(counters.failed() + " of " + submitted + " writes failed");
        }
        sender.close();
        receiver.close();
        arena.close();
    }
}
