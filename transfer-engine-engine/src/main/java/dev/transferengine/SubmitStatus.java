package dev.transferengine;

/**
 * What {@link TransferEngine#trySubmit} did with a request, for callers that handle back-pressure in their loop
 * instead of catching an exception (like Aeron's {@code Publication.offer} returning {@code BACK_PRESSURED}).
 */
public enum SubmitStatus {
    /** Queued for its worker: its completion will report exactly once. */
    ACCEPTED,
    /** The worker's submission queue is full: nothing was queued and no completion follows; retry later. */
    BACK_PRESSURED,
    /** The engine is closed: nothing was queued and no completion follows. */
    CLOSED
}
