package dev.transferengine;

/** The worker's submission queue is full; retry later or raise {@code submitQueueCapacity}. */
public final class BackPressureException extends TransferEngineException {

    public BackPressureException(final String message) {
        super(message);
    }
}
