package dev.transferengine;

/** An operation or a wait did not complete within its timeout. */
public final class TransferTimeoutException extends TransferEngineException {

    public TransferTimeoutException(final String message) {
        super(message);
    }
}
