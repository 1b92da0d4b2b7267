package dev.transferengine.core;

import dev.transferengine.CompletionObserver;
import dev.transferengine.EngineCounter;
import dev.transferengine.EngineMetrics;
import dev.transferengine.NicCounter;
import dev.transferengine.StageProbe;
import dev.transferengine.TransferCounters;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import org.jspecify.annotations.Nullable;

/**
 * The engine's counters, kept as plain atomics so every read is one load and no meter exists per operation. NIC
 * counters have a single writer (their worker); engine counters are shared.
 */
@SuppressWarnings("EnumOrdinal") // a flat table indexed by counter ordinal: no EnumMap or boxing on the worker
final class Counters implements EngineMetrics {

    private static final int NIC_COUNTERS = NicCounter.values().length;

    private final AtomicLongArray engine = new AtomicLongArray(EngineCounter.values().length);
    private final AtomicLongArray[] nics;
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicLong latencyCount = new AtomicLong();
    private final AtomicLong latencyTotal = new AtomicLong();
    private final AtomicLong latencyMax = new AtomicLong();
    private final CompletionRecords completions = new CompletionRecords(this);
    private final TransferCountersUpdater transferCounters;
    private volatile @Nullable StageProbe stageProbe;

    Counters(final List<Integer> nicsPerGroup, final TransferCountersUpdater transferCounters) {
        this.transferCounters = transferCounters;
        nics = new AtomicLongArray[nicsPerGroup.size()];
        for (int g = 0; g < nics.length; g++) {
            nics[g] = new AtomicLongArray(nicsPerGroup.get(g) * NIC_COUNTERS);
        }
    }

    void increment(final EngineCounter counter) {
        engine.getAndIncrement(counter.ordinal());
    }

    void add(final EngineCounter counter, final long delta) {
        engine.getAndAdd(counter.ordinal(), delta);
    }

    /** Worker of {@code group} only: single writer, so a release store suffices. */
    void add(final int group, final int nic, final NicCounter counter, final long delta) {
        final int index = nic * NIC_COUNTERS + counter.ordinal();
        final AtomicLongArray array = nics[group];
        array.setRelease(index, array.getPlain(index) + delta);
    }

    /** Ends one request on a user's {@link TransferCounters}. */
    void mark(final TransferCounters counters, final boolean done) {
        if (done) {
            transferCounters.markDone(counters);
        } else {
            transferCounters.markFailed(counters);
        }
    }

    void inFlight(final long delta) {
        inFlight.addAndGet(delta);
    }

    void recordLatency(final long nanos) {
        latencyCount.incrementAndGet();
        latencyTotal.addAndGet(nanos);
        long max = latencyMax.get();
        while (nanos > max && !latencyMax.compareAndSet(max, nanos)) {
            max = latencyMax.get();
        }
    }

    /** The records of ended operations for the completion observers. */
    CompletionRecords completions() {
        return completions;
    }

    @Override
    public void setStageProbe(final @Nullable StageProbe probe) {
        stageProbe = probe;
    }

    /** The installed probe, or null (the usual case: then no stage is timed). */
    @Nullable StageProbe stageProbe() {
        return stageProbe;
    }

    @Override
    public void addCompletionObserver(final CompletionObserver observer) {
        completions.add(observer);
    }

    @Override
    public long counter(final EngineCounter counter) {
        return engine.get(counter.ordinal());
    }

    @Override
    public long counter(final int group, final int nic, final NicCounter counter) {
        return nics[group].get(nic * NIC_COUNTERS + counter.ordinal());
    }

    @Override
    public long inFlight() {
        return inFlight.get();
    }

    @Override
    public long latencyCount() {
        return latencyCount.get();
    }

    @Override
    public long latencyTotalNanos() {
        return latencyTotal.get();
    }

    @Override
    public long latencyMaxNanos() {
        return latencyMax.get();
    }
}
