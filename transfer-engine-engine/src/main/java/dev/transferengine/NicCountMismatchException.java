package dev.transferengine;

import java.io.Serial;

/** A descriptor or peer address list names a different number of NICs than the group that would use it. */
public final class NicCountMismatchException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    public NicCountMismatchException(final String message) {
        super(message);
    }
}
