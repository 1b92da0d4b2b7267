package dev.transferengine;

import java.io.Serial;

/**
 * The engine was closed: the call came after {@code close()}, or the operation was pending when it closed.
 *
 * <p>Stackless: an expected outcome, cheap to make, and one instance may be shared by many operations.
 */
public final class EngineClosedException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    public EngineClosedException(final String message) {
        super(message, null, true);
    }
}
