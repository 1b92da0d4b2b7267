package dev.transferengine.exceptions;

import java.io.Serial;

/** An access would fall outside a memory region; nothing was written. */
public final class RegionBoundsException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * An access outside a region, refused before anything was sent.
     *
     * @param message the offset, length and region size that do not fit
     */
    public RegionBoundsException(final String message) {
        super(message);
    }
}
