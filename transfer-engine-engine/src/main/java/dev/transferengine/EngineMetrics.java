package dev.transferengine;

import org.jspecify.annotations.Nullable;

/**
 * Live counters of an engine, cheap to read from any thread (each read is one volatile load); meant to be polled
 * by a metrics registry, never written by users.
 */
public interface EngineMetrics {

    /**
     * Reads one engine-wide counter.
     *
     * @param counter which one
     * @return its value since the engine was built; counters only grow
     */
    long counter(EngineCounter counter);

    /**
     * Reads one counter of one NIC.
     *
     * @param group the group's index in {@link EngineConfig#groups()}
     * @param nic the NIC's index within the group
     * @param counter which one
     * @return its value since the engine was built, restarts of the group included
     * @throws IndexOutOfBoundsException for a group this engine lacks, or a NIC index past the group's last counter
     */
    long counter(int group, int nic, NicCounter counter);

    /**
     * Requests and sends accepted and not yet ended.
     *
     * @return the number in flight now, over all groups
     */
    long inFlight();

    /**
     * How many latencies were recorded: one per completed request.
     *
     * @return the number of completed requests whose latency was recorded
     */
    long latencyCount();

    /**
     * The sum of the recorded latencies; divide by {@link #latencyCount()} for the mean.
     *
     * @return the sum, in nanoseconds (submit to completion, as the callback thread sees it)
     */
    long latencyTotalNanos();

    /**
     * The largest recorded latency.
     *
     * @return the largest latency since the engine was built, in nanoseconds
     */
    long latencyMaxNanos();

    /**
     * From now on tells {@code observer} of every write request and send that ends, on the callback thread. Meant
     * for meters: per-operation latency and outcome by kind, which the counters above cannot give. Any thread;
     * observers cannot be removed.
     *
     * @param observer the observer; must not block
     */
    void addCompletionObserver(CompletionObserver observer);

    /**
     * Installs {@code probe} (null removes it): from the next operation on, the workers tell it when each stage of
     * every write request and send happened, and when imms arrive. For benchmarks; see {@link StageProbe}. Any
     * thread.
     *
     * @param probe the probe, called on worker threads, or {@code null} to stop timing stages
     */
    void setStageProbe(@Nullable StageProbe probe);
}
