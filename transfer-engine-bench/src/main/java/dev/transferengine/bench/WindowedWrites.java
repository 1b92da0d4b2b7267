package dev.transferengine.bench;

import dev.transferengine.TransferEngine;
import dev.transferengine.TransferRequest;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.time.Duration;

import org.agrona.concurrent.IdleStrategy;
import org.jctools.queues.atomic.SpscAtomicArrayQueue;

/**
 * Keeps {@code window} writes outstanding until the interval ends: a free slot is submitted with the next prebuilt
 * request at once; the thread idles only while every slot is in flight. Nothing is allocated per write here.
 */
final class WindowedWrites {

    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(30);

    private final TransferEngine engine;
    private final TransferRequest[] requests;
    private final int window;
    private final IdleStrategy idle;

    WindowedWrites(
            final TransferEngine engine, final TransferRequest[] requests, final int window, final IdleStrategy idle) {
        this.engine = engine;
        this.requests = requests.clone();
        this.window = window;
        this.idle = idle;
    }

    /** Runs until {@code recorder}'s interval is over, then waits for the writes still in flight. Blocks. */
    void run(final LatencyRecorder recorder) {
        // the callback thread is the only producer and this thread the only consumer
        final SpscAtomicArrayQueue<InFlight> free = new SpscAtomicArrayQueue<>(window);
        for (int i = 0; i < window; i++) {
            free.offer(new InFlight(free, recorder));
        }
        long next = 0;
        while (true) {
            final long now = System.nanoTime();
            if (recorder.interval().isOver(now)) {
                break;
            }
            final InFlight slot = free.poll();
            if (slot == null) {
                idle.idle();
                continue;
            }
            idle.reset();
            slot.started(now);
            engine.submit(requests[(int) (next % requests.length)], slot);
            next++;
        }
        drain(free);
    }

    private void drain(final SpscAtomicArrayQueue<InFlight> free) {
        final long deadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
        int taken = 0;
        while (taken < window) {
            if (free.poll() != null) {
                taken++;
            } else if (System.nanoTime() - deadline > 0) {
                throw new TransferTimeoutException(
                        (window - taken) + " requests still in flight " + DRAIN_TIMEOUT + " after the run ended");
            } else {
                idle.idle();
            }
        }
    }
}
