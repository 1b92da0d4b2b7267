package dev.transferengine;

/**
 * The worker's submission queue is full; retry later or raise {@code submitQueueCapacity}.
 *
 * <p>Stackless: an expected outcome, cheap to make, and one instance may be shared by many operations.
 */
public final class BackPressureException extends TransferEngineException {

    public BackPressureException(final String message) {
        super(message, null, true);
    }
}
