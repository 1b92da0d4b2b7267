package dev.transferengine;

import java.io.Serial;

/** An operation or a wait did not complete within its timeout. */
public final class TransferTimeoutException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    public TransferTimeoutException(final String message) {
        super(message);
    }
}
