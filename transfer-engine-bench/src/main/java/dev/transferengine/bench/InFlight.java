package dev.transferengine.bench;

import dev.transferengine.TransferListener;
import dev.transferengine.exceptions.TransferEngineException;

import java.util.Queue;

/**
 * One slot of the window of outstanding writes: remembers when its request was submitted, records the latency when it
 * completes (on the callback thread) and goes back to the free queue. Reused, so the steady state allocates nothing.
 */
final class InFlight implements TransferListener {

    private final Queue<InFlight> free;
    private final LatencyRecorder recorder;
    private long startNanos;

    InFlight(final Queue<InFlight> free, final LatencyRecorder recorder) {
        this.free = free;
        this.recorder = recorder;
    }

    /** Called by the submitting thread just before it submits this slot's request. */
    void started(final long nanos) {
        this.startNanos = nanos;
    }

    @Override
    public void onDone() {
        recorder.done(startNanos, System.nanoTime());
        free.offer(this);
    }

    @Override
    public void onError(final TransferEngineException error) {
        recorder.failed(error);
        free.offer(this);
    }
}
