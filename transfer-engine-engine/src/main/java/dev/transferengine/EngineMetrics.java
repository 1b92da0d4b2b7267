package dev.transferengine;

import org.jspecify.annotations.Nullable;

/**
 * Live counters of an engine, cheap to read from any thread (each read is one volatile load); meant to be polled
 * by a metrics registry, never written by users.
 */
public interface EngineMetrics {

    long counter(EngineCounter counter);

    long counter(int group, int nic, NicCounter counter);

    /** Requests and sends accepted and not yet ended. */
    long inFlight();

    /** Number of completed requests whose latency was recorded. */
    long latencyCount();

    /** Sum of those latencies, in nanoseconds (submit to completion, as the callback thread sees it). */
    long latencyTotalNanos();

    /** Largest recorded latency, in nanoseconds. */
    long latencyMaxNanos();

    /**
     * From now on tells {@code observer} of every write request and send that ends, on the callback thread. Meant
     * for meters: per-operation latency and outcome by kind, which the counters above cannot give.
     */
    void addCompletionObserver(CompletionObserver observer);

    /**
     * Installs {@code probe} (null removes it): from the next operation on, the workers tell it when each stage of
     * every write request and send happened, and when imms arrive. For benchmarks; see {@link StageProbe}.
     */
    void setStageProbe(@Nullable StageProbe probe);
}
