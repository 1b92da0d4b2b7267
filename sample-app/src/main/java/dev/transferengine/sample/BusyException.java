package dev.transferengine.sample;

/** A transfer or push was asked for while another one was still running on this node. */
public final class BusyException extends RuntimeException {

    /**
     * @param message what is busy
     */
    public BusyException(final String message) {
        super(message);
    }
}
