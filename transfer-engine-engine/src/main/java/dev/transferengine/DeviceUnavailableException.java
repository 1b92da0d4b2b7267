package dev.transferengine;

/** A {@link Device} was asked for that this engine cannot serve (no GPU, no group for that GPU, ...). */
public final class DeviceUnavailableException extends TransferEngineException {

    public DeviceUnavailableException(final String message) {
        super(message);
    }

    public DeviceUnavailableException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
