package dev.transferengine.core;

import dev.transferengine.BarrierWrite;
import dev.transferengine.EngineCounter;
import dev.transferengine.ImmWrite;
import dev.transferengine.NetworkAddress;
import dev.transferengine.OperationKind;
import dev.transferengine.PagedRead;
import dev.transferengine.PagedWrite;
import dev.transferengine.ScatterRead;
import dev.transferengine.ScatterWrite;
import dev.transferengine.SingleRead;
import dev.transferengine.SingleWrite;
import dev.transferengine.StageProbe;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferListener;
import dev.transferengine.TransferRequest;
import dev.transferengine.exceptions.TransferEngineException;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * One accepted request or send on its way through a worker. Filled by the caller, then owned by the worker, which
 * counts its outstanding writes, ends it exactly once through whichever completion the caller chose, and hands
 * it back to the {@link Submissions} pool, so the steady state allocates none.
 */
final class Submission {

    @Nullable TransferRequest request;

    @Nullable NetworkAddress sendPeer;

    @Nullable MemorySegment sendBuffer;

    private @Nullable TransferListener listener;
    private @Nullable TransferCounters transferCounters;
    private @Nullable CompletableFuture<Void> future;
    long startNanos;
    /** Stage timestamps, taken only while a {@link dev.transferengine.StageProbe} is installed (else 0). */
    long takenNanos;

    long postedNanos;

    // worker-owned state
    long token;
    int remaining;
    /** Pieces that ended well: imm events the receiver surely got, for a negative acknowledgement's count. */
    int confirmed;

    boolean failed;
    /** When it times out, on the engine's clock: its submission plus the operation timeout. */
    long deadlineNanos;

    Submission write(
            final TransferRequest value,
            final @Nullable TransferListener onDone,
            final @Nullable TransferCounters counters,
            final @Nullable CompletableFuture<Void> onFuture) {
        this.request = value;
        this.listener = onDone;
        this.transferCounters = counters;
        this.future = onFuture;
        this.startNanos = System.nanoTime();
        return this;
    }

    Submission send(final NetworkAddress peer, final MemorySegment buffer, final TransferListener onDone) {
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
        confirmed = 0;
        token = 0;
        takenNanos = 0;
        postedNanos = 0;
    }

    private static void recordRequest(
            final TransferRequest request, final long nanos, final boolean success, final CompletionRecords records) {
        switch (request) {
            case SingleWrite w ->
                records.record(OperationKind.WRITE, w.dst().nic(0).address(), w.length(), nanos, success);
            case PagedWrite w ->
                records.record(
                        OperationKind.PAGED_WRITE,
                        w.dst().nic(0).address(),
                        w.pageLength() * w.pageCount(),
                        nanos,
                        success);
            case ImmWrite w -> records.record(OperationKind.IMM, w.dst().nic(0).address(), 0, nanos, success);
            case BarrierWrite w -> records.record(OperationKind.BARRIER, null, 0, nanos, success);
            case ScatterWrite w -> records.record(OperationKind.SCATTER, null, scatterBytes(w), nanos, success);
            case SingleRead r ->
                records.record(OperationKind.READ, r.src().nic(0).address(), r.length(), nanos, success);
            case PagedRead r ->
                records.record(
                        OperationKind.PAGED_READ,
                        r.src().nic(0).address(),
                        r.pageLength() * r.pageCount(),
                        nanos,
                        success);
            case ScatterRead r -> records.record(OperationKind.SCATTER_READ, null, gatherBytes(r), nanos, success);
        }
    }

    private static OperationKind kindOf(final @Nullable TransferRequest request) {
        return switch (request) {
            case null -> OperationKind.SEND;
            case SingleWrite w -> OperationKind.WRITE;
            case PagedWrite w -> OperationKind.PAGED_WRITE;
            case ImmWrite w -> OperationKind.IMM;
            case BarrierWrite w -> OperationKind.BARRIER;
            case ScatterWrite w -> OperationKind.SCATTER;
            case SingleRead r -> OperationKind.READ;
            case PagedRead r -> OperationKind.PAGED_READ;
            case ScatterRead r -> OperationKind.SCATTER_READ;
        };
    }

    private static long gatherBytes(final ScatterRead read) {
        long bytes = 0;
        for (int i = 0; i < read.sources().size(); i++) {
            bytes += read.sources().get(i).length();
        }
        return bytes;
    }

    private static long scatterBytes(final ScatterWrite write) {
        long bytes = 0;
        for (int i = 0; i < write.targets().size(); i++) {
            bytes += write.targets().get(i).length();
        }
        return bytes;
    }

    /** Whether this is the operation submitted with {@code value}. */
    @SuppressWarnings("ReferenceEquality") // the listener is the operation's identity, whatever its equals says
    boolean hasListener(final TransferListener value) {
        return listener == value;
    }

    /** Whether its caller gave up on it ({@link TransferListener#isCancelled()}). */
    boolean isCancelled() {
        return listener != null && listener.isCancelled();
    }

    boolean isSend() {
        return request == null;
    }

    /** Ends the submission: {@code error == null} means done. Worker thread; user code runs on the callback thread. */
    void complete(
            final @Nullable TransferEngineException error,
            final CallbackDispatcher callbacks,
            final Counters counters) {
        counters.inFlight(-1);
        final long now = System.nanoTime();
        final long nanos = now - startNanos;
        final StageProbe probe = counters.stageProbe();
        if (probe != null && takenNanos != 0) {
            try {
                probe.onStages(
                        kindOf(request),
                        startNanos,
                        takenNanos,
                        postedNanos == 0 ? takenNanos : postedNanos,
                        now,
                        error == null);
            } catch (final RuntimeException e) { // a probe bug must not keep the request from ending
                counters.increment(EngineCounter.CALLBACK_ERRORS);
            }
        }
        if (request == null) {
            counters.completions()
                    .record(
                            OperationKind.SEND,
                            sendPeer,
                            sendBuffer == null ? 0 : sendBuffer.byteSize(),
                            nanos,
                            error == null);
        } else {
            recordRequest(request, nanos, error == null, counters.completions());
        }
        if (error == null) {
            counters.increment(isSend() ? EngineCounter.SENDS_DONE : EngineCounter.REQUESTS_DONE);
            counters.recordLatency(nanos);
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
