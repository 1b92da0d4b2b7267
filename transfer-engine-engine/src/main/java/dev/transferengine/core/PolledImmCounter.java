package dev.transferengine.core;

import dev.transferengine.ImmCounter;
import dev.transferengine.exceptions.ImmAbandonedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/** Credit counter for one imm: the worker adds, waiters take and spin until the balance is covered. */
final class PolledImmCounter implements ImmCounter {

    private static final int SPINS_BEFORE_PARK = 10_000;

    private final int imm;
    private final AtomicLong balance;
    private volatile boolean detached;
    /** A negative acknowledgement not yet taken: the next waiter that is short of credits ends with it. */
    private final AtomicReference<@Nullable ImmAbandonedException> abandoned = new AtomicReference<>();

    PolledImmCounter(final int imm, final long initialCredits) {
        this.imm = imm;
        this.balance = new AtomicLong(initialCredits);
    }

    void credit() {
        balance.incrementAndGet();
    }

    /** A sender abandoned an operation carrying this imm: a waiter short of credits, now or next, ends with it. */
    void abandon(final ImmAbandonedException abandonment) {
        abandoned.set(abandonment);
    }

    /** The counter was replaced or removed: waiters stop waiting instead of hanging. */
    void detach() {
        detached = true;
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
        awaitUntil(n, System.nanoTime() + timeout.toNanos(), timeout);
    }

    private void awaitUntil(final long n, final long deadline, final @Nullable Duration timeout) {
        if (n < 0) {
            throw new IllegalArgumentException("credits to take must be >= 0, was " + n);
        }
        if (balance.addAndGet(-n) >= 0) {
            return;
        }
        int spins = 0;
        while (balance.get() < 0) {
            final ImmAbandonedException abandonment = abandoned.getAndSet(null);
            if (abandonment != null) {
                balance.addAndGet(n);
                throw abandonment;
            }
            if (detached) {
                balance.addAndGet(n);
                throw new InvalidRequestException(
                        "the counter for imm " + imm + " was replaced or removed while waiting");
            }
            if (timeout != null && System.nanoTime() - deadline > 0) {
                balance.addAndGet(n);
                throw new TransferTimeoutException("imm " + imm + ": waited " + timeout + " for " + n
                        + " credits, balance " + (balance.get() - n));
            }
            if (++spins < SPINS_BEFORE_PARK) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(20_000);
            }
        }
    }
}
