package dev.transferengine;

import java.io.Serial;

/** A peer could not be reached, or its connection was lost while operations to it were in flight. */
public final class PeerUnreachableException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /** Not serialised (NetAddr is not Serializable); the message names the peer too. */
    private final transient NetAddr peer;

    public PeerUnreachableException(final NetAddr peer, final String reason) {
        super("peer " + peer + " unreachable: " + reason);
        this.peer = peer;
    }

    public PeerUnreachableException(final NetAddr peer, final String reason, final Throwable cause) {
        super("peer " + peer + " unreachable: " + reason, cause);
        this.peer = peer;
    }

    /** The address of the NIC that could not be reached. */
    public NetAddr peer() {
        return peer;
    }
}
