package dev.transferengine.exceptions;

import java.io.Serial;

/**
 * The engine was closed: the call came after {@code close()}, or the operation was pending when it closed.
 *
 * <p>Stackless: an expected outcome, cheap to make, and one instance may be shared by many operations.
 */
public final class EngineClosedException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * A stackless closed failure, usually made once per engine and shared.
     *
     * @param message what was refused or abandoned because the engine closed
     */
    public EngineClosedException(final String message) {
        super(message, null, true);
    }
}
