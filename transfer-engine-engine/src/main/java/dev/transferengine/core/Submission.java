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
 * One accepted request or send on its way through a worker. Filled by the caller, then owned by the worker, which
 * counts its outstanding writes, ends it exactly once through whichever completion the caller chose, and hands
 * it back to the {@link Submissions} pool, so the steady state allocates none.
 */
final class Submission {

    @Nullable WriteRequest request;
    @Nullable NetAddr sendPeer;
    @Nullable MemorySegment sendBuffer;
    private @Nullable TransferListener listener;
    private @Nullable TransferCounters transferCounters;
    private @Nullable CompletableFuture<Void> future;
    long startNanos;

    // worker-owned state
    long token;
    int remaining;
    boolean failed;
    long deadlineNanos;

    Submission write(final WriteRequest value, final @Nullable TransferListener onDone,
                     final @Nullable TransferCounters counters, final @Nullable CompletableFuture<Void> onFuture) {
        this.request = value;
        this.listener = onDone;
        this.transferCounters = counters;
        this.future = onFuture;
        this.startNanos = System.nanoTime();
        return this;
    }

    Submission send(final NetAddr peer, final MemorySegment buffer, final TransferListener onDone) {
        this.sendPeer = peer;
        this.sendBuffer = buffer;
        this.listener = onDone;
        this.startNanos = System.nanoTime();
        return this;
    }

    /** Forgets everything, so a pooled submission holds no user objects. */
    void clear() {
        request = null;
        sendPeer = null;
        sendBuffer = null;
        listener = null;
        transferCounters = null;
        future = null;
        failed = false;
        remaining = 0;
        token = 0;
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
            counters.mark(transferCounters, error == null);
        } else if (listener != null) {
            if (error == null) {
                callbacks.dispatchDone(listener);
            } else {
                final TransferListener target = listener;
                callbacks.dispatch(() -> target.onError(error));
            }
        } else if (future != null) {
            final CompletableFuture<Void> target = future;
            callbacks.dispatch(error == null ? () -> target.complete(null) : () -> target.completeExceptionally(error));
        }
    }
}
