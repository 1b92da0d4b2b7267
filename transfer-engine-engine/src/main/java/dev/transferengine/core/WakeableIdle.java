package dev.transferengine.core;

import dev.transferengine.IdleStrategyKind;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import org.agrona.concurrent.IdleStrategy;
import org.jspecify.annotations.Nullable;

/**
 * How an engine thread (a worker, the callback thread) waits when a duty cycle found nothing to do, and how a
 * producer that just queued work for it wakes it.
 *
 * <p>{@link IdleStrategyKind#BACKOFF} spins for {@link #SPIN_NANOS} after the last work, yields until
 * {@link #YIELD_UNTIL_NANOS}, then parks with exponential back-off up to {@link #MAX_PARK_NANOS}, but only while the
 * thread has nothing {@code busy}: a worker with operations in flight waits for the wire, and a park there (woken by
 * no producer, rounded up by the timer slack) cost a tcp 1 MiB write stream a fifth of its throughput on the
 * accelerator host, so it keeps yielding until its operations end. The phases are
 * bounded by time, not by duty cycles: a cycle of the tcp transport polls its selector (a system call, 1-2 us), so the
 * 1,000 spins and 100 yields this took before kept an idle tcp worker on its core for 1-2 ms after every event; nine
 * engines in one process (te-bench moe) then spun more core time than a small layer's whole exchange, and the threads
 * with work waited for cores. Before parking it announces itself and checks {@code pending} once more, and
 * {@link #wake()} unparks an announced thread: a submission or callback that arrives while the thread sleeps
 * waits for no timer. The park stays short because what no producer announces (a remote write landing on a
 * manual-progress provider, a completion due on a NIC) is found only by polling: with the 250 us of the earlier
 * back-off, a target's worker could leave an initiator's write waiting that long. SPIN and YIELD never park, and
 * {@link #wake()} costs them one volatile read.
 *
 * <p>{@link #idle(int)} and {@link #reset()} are called by the owning thread only; {@link #wake()} by any thread.
 * Allocation-free.
 */
final class WakeableIdle implements IdleStrategy {

    /** Longest park. Linux rounds short parks up to the timer slack (50 us by default), so less would buy little. */
    static final long MAX_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    /**
     * How long BACKOFF spins after the last work: a reply on loopback (an imm round trip is 5-25 us) is still caught
     * without a yield or a park.
     */
    static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    /** How long after the last work BACKOFF stops yielding and parks. */
    static final long YIELD_UNTIL_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

    private static final long MIN_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(1);

    private final IdleStrategyKind kind;
    private final BooleanSupplier pending;
    private final BooleanSupplier busy;
    private volatile @Nullable Thread parked;
    /** Whether the thread idled since its last work, and since when. */
    private boolean idling;

    private long idleSince;
    private long parkNanos = MIN_PARK_NANOS;

    /**
     * {@code pending}: whether work was queued that the next duty cycle would find; any thread may have queued it.
     * {@code busy}: whether the owning thread waits for the outcome of work it started (read by that thread only).
     */
    WakeableIdle(final IdleStrategyKind kind, final BooleanSupplier pending, final BooleanSupplier busy) {
        this.kind = kind;
        this.pending = pending;
        this.busy = busy;
    }

    @Override
    public void idle(final int workCount) {
        if (workCount > 0) {
            reset();
        } else {
            idle();
        }
    }

    @Override
    @SuppressWarnings("ThreadPriorityCheck") // yielding is what IdleStrategyKind.YIELD asks for
    public void idle() {
        switch (kind) {
            case SPIN -> Thread.onSpinWait();
            case YIELD -> Thread.yield();
            case BACKOFF -> backOff();
        }
    }

    @SuppressWarnings("ThreadPriorityCheck") // the back-off's middle phase yields, as Agrona's does
    private void backOff() {
        final long now = System.nanoTime();
        if (!idling) {
            idling = true;
            idleSince = now;
        }
        final long idleNanos = now - idleSince;
        if (idleNanos < SPIN_NANOS) {
            Thread.onSpinWait();
        } else if (idleNanos < YIELD_UNTIL_NANOS || busy.getAsBoolean()) {
            Thread.yield();
        } else {
            // announce first, then look again: a producer that queued before the announcement is seen here, one that
            // queued after it sees the announcement and unparks (both sides are volatile accesses)
            parked = Thread.currentThread();
            if (!pending.getAsBoolean()) {
                LockSupport.parkNanos(parkNanos);
                parkNanos = Math.min(parkNanos << 1, MAX_PARK_NANOS);
            }
            parked = null;
        }
    }

    @Override
    public void reset() {
        idling = false;
        parkNanos = MIN_PARK_NANOS;
    }

    /** Unparks the owning thread if it is parked, so that work just queued is taken at once. Any thread; never blocks. */
    void wake() {
        final Thread thread = parked;
        if (thread != null) {
            LockSupport.unpark(thread);
        }
    }

    @Override
    public String alias() {
        return "wakeable-" + kind.name().toLowerCase(Locale.ROOT);
    }
}
