package dev.transferengine;

/**
 * The engine was closed: the call came after {@code close()}, or the operation was pending when it closed.
 *
 * <p>Stackless: an expected outcome, cheap to make, and one instance may be shared by many operations.
 */
public final class EngineClosedException extends TransferEngineException {

    public EngineClosedException(final String message) {
        super(message, null, true);
    }
}
