package dev.transferengine;

/** An access would fall outside a memory region; nothing was written. */
public final class RegionBoundsException extends TransferEngineException {

    public RegionBoundsException(final String message) {
        super(message);
    }
}
