package dev.transferengine;

import java.io.Serial;

/** An access would fall outside a memory region; nothing was written. */
public final class RegionBoundsException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    public RegionBoundsException(final String message) {
        super(message);
    }
}
