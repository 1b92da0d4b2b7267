package dev.transferengine;

import java.io.Serial;

/** A {@link Device} was asked for that this engine cannot serve (no GPU, no group for that GPU, ...). */
public final class DeviceUnavailableException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    public DeviceUnavailableException(final String message) {
        super(message);
    }

    public DeviceUnavailableException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
