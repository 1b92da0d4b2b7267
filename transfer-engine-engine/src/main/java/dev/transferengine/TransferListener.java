package dev.transferengine;

import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;

/**
 * Completion of one submitted request or send. Called exactly once, on the engine's callback thread, never on a
 * worker; keep it short, since it delays every later callback.
 */
public interface TransferListener {

    /** Every write of the request completed. */
    void onDone();

    /**
     * The first error of the request; no {@link #onDone()} follows.
     *
     * @param error the typed failure, e.g. {@link TransferTimeoutException} or {@link PeerUnreachableException}; may
     *     be a shared stackless instance, so do not add suppressed exceptions to it
     */
    void onError(TransferEngineException error);

    /**
     * Whether the caller gave up on the operation: a worker that finds this true before it posts the operation never
     * posts it, and ends it with {@link dev.transferengine.exceptions.OperationCancelledException}. Pair it with
     * {@link TransferEngine#cancel(TransferListener)} for an operation already posted. Called on a worker: cheap,
     * non-blocking, allocation-free. The default is never cancelled.
     *
     * @return true once cancelled
     */
    default boolean isCancelled() {
        return false;
    }
}
