package dev.transferengine.exceptions;

import java.io.Serial;

/**
 * An operation or a wait did not complete within its timeout.
 *
 * <p>Stackless: an expected outcome, cheap to make, and one instance may be shared by many operations.
 */
public final class TransferTimeoutException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * A stackless timeout, cheap enough to make per operation.
     *
     * @param message what did not complete and the timeout it had
     */
    public TransferTimeoutException(final String message) {
        super(message, null, true);
    }
}
