package dev.transferengine.exceptions;

import dev.transferengine.Device;

import java.io.Serial;

/** A {@link Device} was asked for that this engine cannot serve (no GPU, no group for that GPU, ...). */
public final class DeviceUnavailableException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * A device this engine cannot serve.
     *
     * @param message the device asked for and why this engine cannot serve it
     */
    public DeviceUnavailableException(final String message) {
        super(message);
    }

    /**
     * A device this engine cannot serve, because of a failure underneath.
     *
     * @param message the device asked for and why this engine cannot serve it
     * @param cause the failure that made it unavailable, e.g. from the CUDA driver
     */
    public DeviceUnavailableException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
