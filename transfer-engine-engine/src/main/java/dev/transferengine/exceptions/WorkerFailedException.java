package dev.transferengine.exceptions;

import dev.transferengine.MemoryRegion;

import java.io.Serial;

/**
 * The worker of the operation's group hit an unrecoverable error (the cause, e.g. {@link OutOfMemoryError}) while the
 * operation was in flight. The group was marked down, then restarted with freshly opened NICs; the operation may
 * or may not have reached its peer. Regions of that group were registered again under new keys: share their new
 * {@link MemoryRegion#descriptor()}s.
 */
public final class WorkerFailedException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * A stackless failure shared by the operations in flight when the worker failed.
     *
     * @param message the group and what happened to the operation
     * @param cause the worker's unrecoverable error, shared by every operation of the group that was in flight
     */
    public WorkerFailedException(final String message, final Throwable cause) {
        super(message, cause, true);
    }
}
