package dev.transferengine.bench.jmh;

import dev.transferengine.Device;
import dev.transferengine.ImmCountListener;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.exceptions.ImmAbandonedException;
import dev.transferengine.test.Domains;
import dev.transferengine.test.HoldingDomain;
import dev.transferengine.test.HoldingTransport;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
 * Negative acknowledgements (docs/delivery-contract.md): each invocation arms an expectation on the receiver,
 * submits a 64-byte write with that imm that must fail, and returns once the receiver's expectation ended with
 * {@code ImmAbandonedException}. The JMH score is that whole round; the trial's tear-down also prints the part the
 * issue asks for, sender failure (its future failed) to receiver failure (the expectation ended), as p50/p99 in
 * microseconds. How the write fails is {@link #failure}: {@code refused}, to a deregistered region (on tcp the stale
 * key is refused at once; on libfabric, where a refusal may only end by the operation timeout, the round includes
 * that timeout and the printed figure does not); or {@code timeout}, held at the sender's NIC
 * ({@link HoldingTransport}) until its operation timeout ({@link #timeoutMs}) ends it, so that the acknowledgement
 * crosses a transport that has refused nothing (fabric/shm: a refused write leaves its endpoint stuck toward the
 * peer, docs/delivery-contract.md). A round whose write does not fail within its operation timeout plus 1 s, or
 * whose receiver is not told within 1.5 s of that, fails the run at once, saying which. {@link #options} passes more
 * transport options, e.g. {@code fabric.library=PATH} for another libfabric.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class ImmAbandonBenchmark {

    private static final int SAMPLES = 1 << 20;
    /**
     * Longest the sender's write may take beyond its operation timeout: the contract's 100 ms, and a loaded machine.
     */
    private static final Duration SENDER_GRACE = Duration.ofSeconds(1);
    /**
     * Longest the receiver may take to hear of the failure once the sender saw it: beyond the some 1 s in which
     * fabric posts an acknowledgement again until its receipt comes, after which the sender gives up on it. A round
     * that exceeds it fails the run at once, naming what the receiver did not hear, instead of waiting on.
     */
    private static final Duration RECEIVER_LIMIT = Duration.ofMillis(1500);

    /** {@code tcp} or {@code fabric}. */
    @Param({"tcp"})
    public String transport;

    /** The libfabric provider where {@link #transport} is {@code fabric}: {@code tcp} or {@code shm}. */
    @Param({"tcp"})
    public String provider;

    /** The operation timeout, in milliseconds: what ends a refused write on providers that never report it. */
    @Param({"20"})
    public long timeoutMs;

    /** How the sender's write fails: {@code refused} (stale key) or {@code timeout} (held at the sender's NIC). */
    @Param({"refused"})
    public String failure;

    /** More transport options, {@code key=value;key=value}, e.g. {@code fabric.library=PATH} for another build. */
    @Param({""})
    public String options;

    private Arena arena;
    private TransferEngine sender;
    private TransferEngine receiver;
    private SingleWrite failing;
    private int imm;
    private final long[] deltas = new long[SAMPLES];
    private int samples;

    @Setup(Level.Trial)
    @SuppressWarnings("MustBeClosedChecker") // the benchmark state owns the arena; the trial's tear-down closes it
    public void open() {
        final boolean held =
                switch (failure) {
                    case "refused" -> false;
                    case "timeout" -> true;
                    default -> throw new IllegalArgumentException("failure must be refused or timeout, not " + failure);
                };
        arena = Arena.ofShared();
        sender = engine(held);
        receiver = engine(false);
        final MemoryRegion src = sender.register(arena.allocate(4096, 4096), Device.host());
        final MemoryRegion dst = receiver.register(arena.allocate(4096, 4096), Device.host());
        final RegionDescriptor descriptor = dst.descriptor();
        if (held) {
            HoldingDomain.at(sender.mainAddress()).hold(true); // every write waits there until its timeout
        } else {
            receiver.deregister(dst);
        }
        failing = SingleWrite.of(src, 0, 64, descriptor, 0);
    }

    private TransferEngine engine(final boolean holding) {
        final TransferEngineBuilder builder =
                TransferEngine.builder().transport(transport).operationTimeout(Duration.ofMillis(timeoutMs));
        if ("fabric".equals(transport)) {
            builder.option("fabric.provider", provider).bindAddress("127.0.0.1");
        }
        Domains.options(Map.of(), options).forEach(builder::option);
        if (holding) {
            builder.option(HoldingTransport.WRAPPED, transport).transport(HoldingTransport.NAME);
        }
        return builder.build();
    }

    /** One failing write with an imm, until the receiver's expectation ended with the sender's abandonment. */
    @Benchmark
    public long abandonedWrite() {
        final int value = ++imm;
        final CompletableFuture<Long> receiverFailed = new CompletableFuture<>();
        receiver.expectImmCount(value, 1, new ImmCountListener() {
            @Override
            public boolean onReached(final int reached) {
                receiverFailed.completeExceptionally(new IllegalStateException("a failing write's imm arrived"));
                return false;
            }

            @Override
            public void onAbandoned(final ImmAbandonedException abandoned) {
                receiverFailed.complete(System.nanoTime());
            }
        });
        final CompletableFuture<Long> senderFailed = sender.submit(failing.withImm(value))
                .handle((ok, error) -> {
                    if (error == null) {
                        throw new IllegalStateException("the write that had to fail succeeded");
                    }
                    return System.nanoTime();
                });
        final long senderAt = ended(
                senderFailed,
                Duration.ofMillis(timeoutMs).plus(SENDER_GRACE),
                "the sender's write to a " + (failure.equals("refused") ? "deregistered region" : "held NIC")
                        + " did not end");
        final long delta =
                ended(receiverFailed, RECEIVER_LIMIT, "the receiver was not told of the sender's failure") - senderAt;
        if (samples < SAMPLES) {
            deltas[samples++] = delta;
        }
        return delta;
    }

    /**
     * When {@code future} completed; one that does not complete within {@code limit} fails the run (JMH reports it
     * failed, with {@code what}) instead of hanging it.
     */
    private long ended(final CompletableFuture<Long> future, final Duration limit, final String what) {
        try {
            return future.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (final TimeoutException e) {
            throw new IllegalStateException(
                    what + " within " + limit.toMillis() + " ms (" + transport
                            + ("fabric".equals(transport) ? "/" + provider : "") + ", imm " + imm + ", round "
                            + (samples + 1) + ")",
                    e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (final ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        final long[] sorted = Arrays.copyOf(deltas, samples);
        Arrays.sort(sorted);
        if (sorted.length > 0) {
            System.out.printf(
                    "%nsender failure -> receiver failure (%s%s, %s): p50 %.1f us, p99 %.1f us, %d samples%n",
                    transport,
                    "fabric".equals(transport) ? "/" + provider : "",
                    failure,
                    sorted[sorted.length / 2] / 1e3,
                    sorted[(int) Math.min(sorted.length - 1, sorted.length * 99L / 100)] / 1e3,
                    sorted.length);
        }
        sender.close();
        receiver.close();
        arena.close();
    }
}
