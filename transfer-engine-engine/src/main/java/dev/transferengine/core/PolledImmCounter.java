package dev.transferengine.core;

import dev.transferengine.ImmCounter;
import dev.transferengine.exceptions.ImmAbandonedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/**
 * Credit counter for one imm: the worker adds, waiters take and spin until the balance is covered, for
 * {@link #SPIN_NANOS}; then a waiter parks and the worker's credit (or an abandonment, or the detach) unparks it. One
 * waiter at a time parks that way; a second concurrent one polls with short parks, as every waiter did before.
 * Spinning 10,000 times and then polling every 20 us cost each wait that outlasted a reply 0.2-0.5 ms of a core and up
 * to the timer slack (50 us) of latency per wake: in te-bench moe, about thirty such waits per layer.
 */
final class PolledImmCounter implements ImmCounter {

    /** How long a waiter spins before it parks: covers an imm round trip on loopback (5-25 us) without a wake-up. */
    static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    /** Longest park of the waiter that the worker wakes: a bound, should a wake-up ever be missed. */
    private static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /** How a waiter polls while another one holds {@link #waiter}. */
    private static final long POLL_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

    private final int imm;
    private final AtomicLong balance;
    /** The thread parked waiting for credits, which {@link #credit(int)} unparks; null while none is. */
    private final AtomicReference<@Nullable Thread> waiter = new AtomicReference<>();

    private volatile boolean detached;
    /** A negative acknowledgement not yet taken: the next waiter that is short of credits ends with it. */
    private final AtomicReference<@Nullable ImmAbandonedException> abandoned = new AtomicReference<>();

    PolledImmCounter(final int imm, final long initialCredits) {
        this.imm = imm;
        this.balance = new AtomicLong(initialCredits);
    }

    /** Worker: {@code count} imms arrived; unparks the waiter, if one is parked. */
    void credit(final int count) {
        balance.addAndGet(count);
        wakeWaiter();
    }

    /** A sender abandoned an operation carrying this imm: a waiter short of credits, now or next, ends with it. */
    void abandon(final ImmAbandonedException abandonment) {
        abandoned.set(abandonment);
        wakeWaiter();
    }

    /** The counter was replaced or removed: waiters stop waiting instead of hanging. */
    void detach() {
        detached = true;
        wakeWaiter();
    }

    /**
     * Unparks the announced waiter. The waiter announces itself, then reads the balance; this side changed the balance
     * (or flag) before it reads the announcement, so one of the two sees the other: no wake-up is lost.
     */
    private void wakeWaiter() {
        final Thread parked = waiter.get();
        if (parked != null) {
            LockSupport.unpark(parked);
        }
    }

    @Override
    public int imm() {
        return imm;
    }

    @Override
    public long balance() {
        return balance.get();
    }

    @Override
    public void await(final long n) {
        awaitUntil(n, Long.MAX_VALUE, null);
    }

    @Override
    public void await(final long n, final Duration timeout) {
        if (!tryAwait(n, timeout)) {
            throw new TransferTimeoutException(
                    "imm " + imm + ": waited " + timeout + " for " + n + " credits, balance " + (balance.get() - n));
        }
    }

    @Override
    public boolean tryAwait(final long n, final Duration timeout) {
        return awaitUntil(n, System.nanoTime() + timeout.toNanos(), timeout);
    }

    /** Waits for {@code n} credits; false once past {@code deadline} (with a timeout), the credits given back. */
    private boolean awaitUntil(final long n, final long deadline, final @Nullable Duration timeout) {
        if (n < 0) {
            throw new IllegalArgumentException("credits to take must be >= 0, was " + n);
        }
        if (balance.addAndGet(-n) >= 0) {
            return true;
        }
        final long spinUntil = System.nanoTime() + SPIN_NANOS;
        final Thread self = Thread.currentThread();
        boolean announced = false;
        try {
            while (balance.get() < 0) {
                if (ended(n, deadline, timeout)) {
                    return false;
                }
                if (System.nanoTime() - spinUntil < 0) {
                    Thread.onSpinWait();
                } else if (!announced && waiter.compareAndSet(null, self)) {
                    announced = true; // the loop reads the balance once more before the first park
                } else if (announced) {
                    LockSupport.parkNanos(
                            this,
                            timeout == null
                                    ? MAX_PARK_NANOS
                                    : Math.clamp(deadline - System.nanoTime(), 1, MAX_PARK_NANOS));
                } else {
                    LockSupport.parkNanos(this, POLL_PARK_NANOS); // another thread waits announced
                }
            }
        } finally {
            if (announced) {
                waiter.set(null);
            }
        }
        return true;
    }

    /**
     * Ends a wait short of credits, giving them back: throws if it was abandoned or detached, answers true if it is
     * past its deadline.
     */
    private boolean ended(final long n, final long deadline, final @Nullable Duration timeout) {
        final ImmAbandonedException abandonment = abandoned.getAndSet(null);
        if (abandonment != null) {
            balance.addAndGet(n);
            throw abandonment;
        }
        if (detached) {
            balance.addAndGet(n);
            throw new InvalidRequestException("the counter for imm " + imm + " was replaced or removed while waiting");
        }
        if (timeout != null && System.nanoTime() - deadline > 0) {
            balance.addAndGet(n);
            return true;
        }
        return false;
    }
}
