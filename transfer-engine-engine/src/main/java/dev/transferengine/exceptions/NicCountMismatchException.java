package dev.transferengine.exceptions;

import java.io.Serial;

/** A descriptor or peer address list names a different number of NICs than the group that would use it. */
public final class NicCountMismatchException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * A NIC count that differs from the group's.
     *
     * @param message both NIC counts and what carried each
     */
    public NicCountMismatchException(final String message) {
        super(message);
    }
}
