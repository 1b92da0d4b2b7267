package dev.transferengine.exceptions;

import java.io.Serial;

/**
 * A bounded resource is full (a submission queue, a peer's request window, a NIC's operation table, the UVM watcher
 * slots); retry later, once some of it is released, or raise its limit.
 *
 * <p>Stackless: an expected outcome, cheap to make, and one instance may be shared by many operations.
 */
public final class BackPressureException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * A stackless back-pressure failure, usually made once per queue and shared.
     *
     * @param message what was full (a group's submission queue, a peer's request window, a NIC's op table, the UVM
     *     watcher slots) and its
     *     capacity
     */
    public BackPressureException(final String message) {
        super(message, null, true);
    }
}
