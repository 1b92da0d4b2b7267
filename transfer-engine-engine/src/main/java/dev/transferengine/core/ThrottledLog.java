package dev.transferengine.core;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * Logs one kind of event at most once per interval, saying how many were held back since, so that a flood of
 * one failure (a hostile peer, a failing NIC) cannot flood the log. Thread-safe; holding back allocates nothing.
 */
final class ThrottledLog {

    private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Logger log;
    private final AtomicLong nextNanos = new AtomicLong(System.nanoTime());
    private final AtomicLong heldBack = new AtomicLong();

    ThrottledLog(final Logger log) {
        this.log = log;
    }

    void warn(final String message, final @Nullable Throwable error) {
        final String line = due();
        if (line != null) {
            log.warn(line + message, error);
        }
    }

    void error(final String message, final @Nullable Throwable error) {
        final String line = due();
        if (line != null) {
            log.error(line + message, error);
        }
    }

    /** The prefix of a line to log now, or null when this one is held back. */
    private @Nullable String due() {
        final long now = System.nanoTime();
        final long next = nextNanos.get();
        if (now - next < 0 || !nextNanos.compareAndSet(next, now + INTERVAL_NANOS)) {
            heldBack.incrementAndGet();
            return null;
        }
        final long skipped = heldBack.getAndSet(0);
        return skipped == 0 ? "" : "(" + skipped + " similar not logged) ";
    }
}
