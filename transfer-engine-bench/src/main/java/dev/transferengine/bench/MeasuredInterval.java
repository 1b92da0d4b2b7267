package dev.transferengine.bench;

import java.time.Duration;

/**
 * The part of a run that counts: from the end of the warm-up to the end of the run, in {@link System#nanoTime()}.
 * An operation counts when it completes inside it.
 *
 * @param start first nanosecond that counts
 * @param end   first nanosecond that no longer counts; submitting stops here
 */
record MeasuredInterval(long start, long end) {

    /** The interval that starts {@code warmup} from now and lasts {@code duration}. */
    static MeasuredInterval after(final Duration warmup, final Duration duration) {
        final long start = System.nanoTime() + warmup.toNanos();
        return new MeasuredInterval(start, start + duration.toNanos());
    }

    boolean contains(final long nanos) {
        return nanos - start >= 0 && nanos - end < 0;
    }

    boolean isOver(final long nanos) {
        return nanos - end >= 0;
    }

    double seconds() {
        return (end - start) / 1e9;
    }
}
