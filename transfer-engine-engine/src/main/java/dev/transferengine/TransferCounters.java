package dev.transferengine;

import dev.transferengine.core.TransferCountersUpdater;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A done/failed counter pair for submissions that need no callback: the worker bumps {@link #done()} when a request
 * completes and {@link #failed()} when it fails (failure also counts as completed). Allocation-free and callback
 * free, for the hottest loops.
 */
public final class TransferCounters {

    /** The engine's only way to bump these counters; handed to the core by {@link TransferEngineBuilder#build()}. */
    static final TransferCountersUpdater UPDATER = new TransferCountersUpdater() {
        @Override
        public void markDone(final TransferCounters counters) {
            counters.done.incrementAndGet();
        }

        @Override
        public void markFailed(final TransferCounters counters) {
            counters.failed.incrementAndGet();
        }
    };

    private final AtomicLong done = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();

    /** Both counters at zero; pass the instance with each submission it should count. */
    public TransferCounters() {
        // nothing to set up: the counters start at zero
    }

    /**
     * Requests counted as done. Any thread; one volatile read.
     *
     * @return how many requests passed with this instance completed without error
     */
    public long done() {
        return done.get();
    }

    /**
     * Requests counted as failed, timeouts included. Any thread; one volatile read.
     *
     * @return how many requests passed with this instance failed
     */
    public long failed() {
        return failed.get();
    }

    /**
     * Requests that ended, either way. Any thread; two volatile reads, not one atomic snapshot.
     *
     * @return {@link #done()} plus {@link #failed()}
     */
    public long completed() {
        return done.get() + failed.get();
    }

    /**
     * Waits until at least {@code target} requests completed, either way. Blocks the calling thread, spinning then
     * parking for 10 us at a time; do not call on a reactor thread. Allocates nothing unless it times out.
     *
     * @param target the count of {@link #completed()} to wait for
     * @param timeout how long to wait, measured from the call
     * @throws TransferTimeoutException if fewer than {@code target} requests completed within {@code timeout}
     */
    public void awaitCompleted(final long target, final Duration timeout) {
        final long deadline = System.nanoTime() + timeout.toNanos();
        int spins = 0;
        while (completed() < target) {
            if (System.nanoTime() - deadline > 0) {
                throw new TransferTimeoutException("waited " + timeout + " for " + target + " completions, saw "
                        + done() + " done and " + failed() + " failed");
            }
            if (++spins < 1000) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(10_000);
            }
        }
    }
}
