package dev.transferengine.core;

import dev.transferengine.EngineCounter;
import dev.transferengine.NetAddr;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngineException;
import dev.transferengine.TransferListener;
import dev.transferengine.WriteRequest;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * One accepted request or send on its way through a worker. Made by the caller, then owned by the worker: the
 * worker counts its outstanding writes and ends it exactly once, through whichever completion the caller chose.
 */
final class Submission {

    final @Nullable WriteRequest request;
    final @Nullable NetAddr sendPeer;
    final @Nullable MemorySegment sendBuffer;
    private final @Nullable TransferListener listener;
    private final @Nullable TransferCounters transferCounters;
    private final @Nullable CompletableFuture<Void> future;
    final long startNanos;

    // worker-owned state
    long token;
    int remaining;
    boolean failed;
    long deadlineNanos;

    private Submission(final @Nullable WriteRequest request, final @Nullable NetAddr sendPeer,
                       final @Nullable MemorySegment sendBuffer, final @Nullable TransferListener listener,
                       final @Nullable TransferCounters transferCounters, final @Nullable CompletableFuture<Void> future) {
        this.request = request;
        this.sendPeer = sendPeer;
        this.sendBuffer = sendBuffer;
        this.listener = listener;
        this.transferCounters = transferCounters;
        this.future = future;
        this.startNanos = System.nanoTime();
    }

    static Submission write(final WriteRequest request, final TransferListener listener) {
        return new Submission(request, null, null, listener, null, null);
    }

    static Submission write(final WriteRequest request, final TransferCounters counters) {
        return new Submission(request, null, null, null, counters, null);
    }

    static Submission write(final WriteRequest request, final CompletableFuture<Void> future) {
        return new Submission(request, null, null, null, null, future);
    }

    static Submission send(final NetAddr peer, final MemorySegment buffer, final TransferListener listener) {
        return new Submission(null, peer, buffer, listener, null, null);
    }

    boolean isSend() {
        return request == null;
    }

    /** Ends the submission: {@code error == null} means done. Worker thread; user code runs on the callback thread. */
    void complete(final @Nullable TransferEngineException error, final CallbackDispatcher callbacks, final Counters counters) {
        counters.inFlight(-1);
        if (error == null) {
            counters.increment(isSend() ? EngineCounter.SENDS_DONE : EngineCounter.REQUESTS_DONE);
            counters.recordLatency(System.nanoTime() - startNanos);
        } else {
            counters.increment(isSend() ? EngineCounter.SENDS_FAILED : EngineCounter.REQUESTS_FAILED);
        }
        if (transferCounters != null) {
            if (error == null) {
                transferCounters.markDone();
            } else {
                transferCounters.markFailed();
            }
        } else if (listener != null) {
            final TransferListener target = listener;
            callbacks.dispatch(error == null ? target::onDone : () -> target.onError(error));
        } else if (future != null) {
            final CompletableFuture<Void> target = future;
            callbacks.dispatch(error == null ? () -> target.complete(null) : () -> target.completeExceptionally(error));
        }
    }
}
