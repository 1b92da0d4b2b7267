package dev.transferengine;

/**
 * An operation or a wait did not complete within its timeout.
 *
 * <p>Stackless: an expected outcome, cheap to make, and one instance may be shared by many operations.
 */
public final class TransferTimeoutException extends TransferEngineException {

    public TransferTimeoutException(final String message) {
        super(message, null, true);
    }
}
