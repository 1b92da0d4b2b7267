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
}
