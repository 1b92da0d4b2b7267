package dev.transferengine.bench;

import dev.transferengine.OperationKind;
import dev.transferengine.StageProbe;

import java.util.LinkedHashMap;
import java.util.Map;

import org.HdrHistogram.Histogram;

/**
 * te-bench {@code --stages}: where an operation's time goes, from the engine's {@link StageProbe}. For windowed writes
 * the worker records each ended write inside the measured interval: {@code queue} (submit to the worker taking it),
 * {@code post} (taken to its last piece handed to the transport) and {@code wire} (posted to the worker reading the
 * last completion: the wire and the remote side). For imm round trips {@link ImmRoundTrip} records per round trip,
 * on its own thread, from the timestamps kept here: queue and post of the ping, {@code wire} from the ping posted to
 * the pong arriving at this side's worker (both wire hops and the whole remote side), and {@code notify} from the
 * pong's arrival to the polling thread seeing it.
 *
 * <p>Recording is allocation-free. The histograms are read once the run is over and every in-flight slot came back,
 * which orders the reads after the worker's writes.
 */
final class StageRecorder implements StageProbe {

    private final MeasuredInterval interval;
    private final boolean perRoundTrip;
    private final Histogram queue = new Histogram(3);
    private final Histogram post = new Histogram(3);
    private final Histogram wire = new Histogram(3);
    private final Histogram notify = new Histogram(3);
    private volatile long lastTaken;
    private volatile long lastPosted;
    private volatile long lastCompleted;
    private volatile long lastArrived;

    /** {@code perRoundTrip}: imm round trips, recorded by {@link #roundTrip}; else the worker records ended writes. */
    StageRecorder(final MeasuredInterval interval, final boolean perRoundTrip) {
        this.interval = interval;
        this.perRoundTrip = perRoundTrip;
    }

    /** Worker thread. */
    @Override
    public void onStages(
            final OperationKind kind,
            final long submittedNanos,
            final long takenNanos,
            final long postedNanos,
            final long completedNanos,
            final boolean success) {
        if (perRoundTrip) {
            lastTaken = takenNanos;
            lastPosted = postedNanos;
            lastCompleted = completedNanos; // written last: a reader that sees it sees the others
            return;
        }
        if (success && interval.contains(completedNanos)) {
            queue.recordValue(Math.max(0, takenNanos - submittedNanos));
            post.recordValue(Math.max(0, postedNanos - takenNanos));
            wire.recordValue(Math.max(0, completedNanos - postedNanos));
        }
    }

    /** Worker thread. */
    @Override
    public void onImmArrived(final int imm, final long arrivedNanos) {
        lastArrived = arrivedNanos;
    }

    /** The completion time of the last ended operation (0 before any), for {@link ImmRoundTrip}. */
    long lastCompleted() {
        return lastCompleted;
    }

    /**
     * The polling thread saw the pong of a round trip that started at {@code startNanos} at {@code seenNanos}, and the
     * ping ended (its {@link #onStages} came). Records the round trip's stages if it ended inside the interval.
     */
    void roundTrip(final long startNanos, final long seenNanos) {
        if (!interval.contains(seenNanos)) {
            return;
        }
        final long posted = lastPosted;
        queue.recordValue(Math.max(0, lastTaken - startNanos));
        post.recordValue(Math.max(0, posted - lastTaken));
        wire.recordValue(Math.max(0, lastArrived - posted));
        notify.recordValue(Math.max(0, seenNanos - lastArrived));
    }

    /** p50 and p99 of each stage in microseconds, keyed {@code queue_p50} etc.; {@code notify} for imm only. */
    Map<String, Double> micros() {
        final Map<String, Double> out = new LinkedHashMap<>();
        put(out, "queue", queue);
        put(out, "post", post);
        put(out, "wire", wire);
        if (perRoundTrip) {
            put(out, "notify", notify);
        }
        return out;
    }

    private static void put(final Map<String, Double> out, final String name, final Histogram histogram) {
        out.put(name + "_p50", Math.round(histogram.getValueAtPercentile(50) / 10.0) / 100.0);
        out.put(name + "_p99", Math.round(histogram.getValueAtPercentile(99) / 10.0) / 100.0);
    }
}
