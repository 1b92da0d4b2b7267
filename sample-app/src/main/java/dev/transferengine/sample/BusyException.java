package dev.transferengine.sample;

import java.io.Serial;

/** A transfer or push was asked for while another one was still running on this node. */
public final class BusyException extends RuntimeException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * @param message what is busy
     */
    public BusyException(final String message) {
        super(message);
    }
}
