package dev.transferengine;

import java.io.Serial;

/**
 * A peer could not be reached, or its connection was lost while operations to it were in flight.
 *
 * <p>Stackless: an expected outcome, cheap to make, and one instance may be shared by many operations.
 */
public final class PeerUnreachableException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    private final NetAddr peer;

    public PeerUnreachableException(final NetAddr peer, final String reason) {
        super("peer " + peer + " unreachable: " + reason, null, true);
        this.peer = peer;
    }

    public PeerUnreachableException(final NetAddr peer, final String reason, final Throwable cause) {
        super("peer " + peer + " unreachable: " + reason, cause, true);
        this.peer = peer;
    }

    /** The address of the NIC that could not be reached. */
    public NetAddr peer() {
        return peer;
    }
}
