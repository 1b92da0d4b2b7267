package dev.transferengine;

/** Base of every error the engine reports; each subclass names one kind of problem. */
public class TransferEngineException extends RuntimeException {

    public TransferEngineException(final String message) {
        super(message);
    }

    public TransferEngineException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
