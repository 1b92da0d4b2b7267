package dev.transferengine.bench;

import dev.transferengine.exceptions.TransferEngineException;

import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * Latencies of the operations that complete inside the measured interval, and the failures. Used by one thread at a
 * time (the engine's callback thread while writes run); the owner reads it after taking every in-flight slot back,
 * which orders the reads after the writes.
 */
final class LatencyRecorder {

    private final MeasuredInterval interval;
    private final Histogram histogram = new Histogram(3);
    private long failures;
    private @Nullable TransferEngineException firstFailure;

    LatencyRecorder(final MeasuredInterval interval) {
        this.interval = interval;
    }

    /** An operation submitted at {@code startNanos} completed at {@code endNanos}. Allocation-free. */
    void done(final long startNanos, final long endNanos) {
        if (interval.contains(endNanos)) {
            histogram.recordValue(endNanos - startNanos);
        }
    }

    void failed(final TransferEngineException error) {
        if (firstFailure == null) {
            firstFailure = error;
        }
        failures++;
    }

    /** Operations that completed inside the interval. */
    long count() {
        return histogram.getTotalCount();
    }

    long failures() {
        return failures;
    }

    @Nullable TransferEngineException firstFailure() {
        return firstFailure;
    }

    /** The latency at {@code percentile} (0..100) in microseconds; 0 without samples. */
    double micros(final double percentile) {
        return histogram.getValueAtPercentile(percentile) / 1e3;
    }

    double maxMicros() {
        return histogram.getMaxValue() / 1e3;
    }

    MeasuredInterval interval() {
        return interval;
    }
}
