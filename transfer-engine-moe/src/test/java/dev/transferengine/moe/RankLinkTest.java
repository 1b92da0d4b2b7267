package dev.transferengine.moe;

import dev.transferengine.EngineCounter;
import dev.transferengine.ScatterTarget;
import dev.transferengine.ScatterWrite;
import dev.transferengine.TransferEngine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Which rank a rank names when a sender abandons the imm it waits for: a live sender whose scatter failed at a rank
 * that died abandons its imm to every target and then aborts the layer naming the dead rank, and the two reach the
 * waiting rank in either order. Each test drives one order by waiting for the first to arrive before causing the
 * second; the links wait for the abort far longer than any test runs, so the order decides the outcome, not a clock.
 */
class RankLinkTest {

    /** One dispatcher (global rank 0, the sender), two expert ranks: 0 waits (global 1), 1 dies (global 2). */
    private static final MoeShape SHAPE = new MoeShape(1, 32, 2, 4, 2, 1);

    private static final int LAYER = 0;
    private static final Duration TIMEOUT = Duration.ofMinutes(5);
    /** Far above the test: a rank that saw the abandonment waits for the abort instead of naming the sender. */
    private static final Duration LONG_GRACE = Duration.ofMinutes(5);

    private final List<TransferEngine> engines = new ArrayList<>();
    private final List<RankLink> links = new ArrayList<>();
    private final ExecutorService threads = Executors.newSingleThreadExecutor();

    @AfterEach
    void close() {
        threads.shutdownNow();
        links.forEach(RankLink::close);
        engines.forEach(TransferEngine::close);
    }

    @Test
    void anAbortThatArrivedBeforeTheAbandonmentNamesTheDeadRank() {
        final RankLink sender = link(MoeRole.DISPATCHER, 0, LONG_GRACE);
        final RankLink waiter = link(MoeRole.EXPERT, 0, LONG_GRACE);
        final RankLink doomed = link(MoeRole.EXPERT, 1, LONG_GRACE);
        connect(sender, waiter, doomed);
        kill(doomed);

        sender.abort(deadRankFailure());
        awaitTrue(() -> waiter.counter(MoeImms.abort(2)).balance() > 0, "the abort to reach the waiting rank");
        abandonToWaiter(sender, waiter);

        assertThatThrownBy(() -> awaitTokens(waiter))
                .isInstanceOfSatisfying(MoeRankFailedException.class, RankLinkTest::namesTheDeadRank);
    }

    @Test
    void anAbortThatArrivesAfterTheAbandonmentNamesTheDeadRank() throws Exception {
        final RankLink sender = link(MoeRole.DISPATCHER, 0, LONG_GRACE);
        final RankLink waiter = link(MoeRole.EXPERT, 0, LONG_GRACE);
        final RankLink doomed = link(MoeRole.EXPERT, 1, LONG_GRACE);
        connect(sender, waiter, doomed);
        kill(doomed);

        abandonToWaiter(sender, waiter);
        final AtomicReference<@Nullable Thread> waiting = new AtomicReference<>();
        final Future<?> wait = threads.submit(() -> {
            waiting.set(Thread.currentThread());
            awaitTokens(waiter);
            return null;
        });
        // the abandonment is there and no abort is, so the waiting rank can only be parked in its wait for the abort
        awaitTrue(
                () -> {
                    final Thread thread = waiting.get();
                    return thread != null && thread.getState() == Thread.State.TIMED_WAITING;
                },
                "the waiting rank to wait for the abort");
        assertThat(wait).isNotDone();
        sender.abort(deadRankFailure());

        assertThatThrownBy(wait::get)
                .cause()
                .isInstanceOfSatisfying(MoeRankFailedException.class, RankLinkTest::namesTheDeadRank);
    }

    @Test
    void anAbandonmentThatNoAbortFollowsNamesTheSender() {
        final RankLink sender = link(MoeRole.DISPATCHER, 0, LONG_GRACE);
        final RankLink waiter = link(MoeRole.EXPERT, 0, Duration.ofMillis(50)); // nothing will come: no need to wait
        final RankLink doomed = link(MoeRole.EXPERT, 1, LONG_GRACE);
        connect(sender, waiter, doomed);
        kill(doomed);

        abandonToWaiter(sender, waiter);

        assertThatThrownBy(() -> awaitTokens(waiter))
                .isInstanceOfSatisfying(MoeRankFailedException.class, e -> {
                    assertThat(e.role()).isEqualTo(MoeRole.DISPATCHER);
                    assertThat(e.rank()).isZero();
                })
                .hasMessageContaining("abandoned");
    }

    private RankLink link(final MoeRole role, final int index, final Duration abortGrace) {
        final TransferEngine engine = Engines.open("tcp");
        engines.add(engine);
        final RankLink link =
                new RankLink(engine, SHAPE, ExchangeMode.ROUTED, role, index, RankLink.RankMemory.host(4096), TIMEOUT);
        links.add(link);
        link.abortGrace(abortGrace);
        return link;
    }

    private static void connect(final RankLink sender, final RankLink waiter, final RankLink doomed) {
        final MoePeers peers = new MoePeers(
                List.of(sender.region.descriptor()), List.of(waiter.region.descriptor(), doomed.region.descriptor()));
        sender.connect(peers, peers.experts(), MoeImms.COMBINE);
        waiter.connect(peers, peers.dispatchers(), MoeImms.TOKENS);
        doomed.connect(peers, peers.dispatchers(), MoeImms.TOKENS);
    }

    /** Expert rank 1 dies: its engine closes. */
    private void kill(final RankLink doomed) {
        doomed.engine.close();
    }

    /** The failure the sender aborts with: expert rank 1 (global rank 2) died. */
    private static MoeRankFailedException deadRankFailure() {
        return new MoeRankFailedException(MoeRole.EXPERT, 1, LAYER, "unreachable", null);
    }

    /**
     * The sender scatters its tokens with their imm to both expert ranks; the dead one fails the scatter, and the
     * sender's engine abandons the imm to both. Returns once the waiting rank's engine received the abandonment.
     */
    private static void abandonToWaiter(final RankLink sender, final RankLink waiter) {
        final long before = waiter.engine.metrics().counter(EngineCounter.IMMS_ABANDONED);
        final MoePeers peers = sender.peers();
        final CompletableFuture<Void> scatter = sender.post(ScatterWrite.of(
                        sender.region,
                        List.of(
                                new ScatterTarget(peers.experts().get(0), 64, 0, 0),
                                new ScatterTarget(peers.experts().get(1), 64, 0, 0)))
                .withImm(MoeImms.of(MoeImms.TOKENS, LAYER, 0)));
        assertThatThrownBy(scatter::join).isInstanceOf(CompletionException.class);
        awaitTrue(
                () -> waiter.engine.metrics().counter(EngineCounter.IMMS_ABANDONED) > before,
                "the abandonment to reach the waiting rank");
    }

    /**
     * The waiting rank waits for the sender's tokens: two credits, so that the one the scatter may have landed on it
     * before failing elsewhere does not cover the wait and the abandonment ends it.
     */
    private static void awaitTokens(final RankLink waiter) {
        waiter.awaitFrom(
                waiter.counter(MoeImms.of(MoeImms.TOKENS, LAYER, 0)), 2, MoeRole.DISPATCHER, 0, LAYER, "tokens");
    }

    private static void namesTheDeadRank(final MoeRankFailedException e) {
        assertThat(e.role()).isEqualTo(MoeRole.EXPERT);
        assertThat(e.rank()).isEqualTo(1);
        assertThat(e.layer()).isEqualTo(LAYER);
        assertThat(e.getMessage()).contains("reported failed by a peer rank");
    }

    /** Waits for an event the test caused, failing (never hanging) if it does not come within the timeout. */
    private static void awaitTrue(final BooleanSupplier condition, final String what) {
        final long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("waited " + TIMEOUT + " for " + what);
            }
            LockSupport.parkNanos(100_000);
        }
    }
}
