package dev.transferengine;

/** The engine was closed: the call came after {@code close()}, or the operation was pending when it closed. */
public final class EngineClosedException extends TransferEngineException {

    public EngineClosedException(final String message) {
        super(message);
    }
}
