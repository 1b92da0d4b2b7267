package dev.transferengine.exceptions;

import dev.transferengine.NetworkAddress;

import java.io.Serial;

/**
 * A peer could not be reached, or its connection was lost while operations to it were in flight.
 *
 * <p>Stackless: an expected outcome, cheap to make, and one instance may be shared by many operations.
 */
public final class PeerUnreachableException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /** The address of the NIC that could not be reached. */
    private final NetworkAddress peer;

    /**
     * A stackless failure to reach a peer.
     *
     * @param peer the address of the NIC that could not be reached
     * @param reason why, e.g. {@code "connection refused"}; the message reads "{@code peer <peer> unreachable:
     *     <reason>}"
     */
    public PeerUnreachableException(final NetworkAddress peer, final String reason) {
        super("peer " + peer + " unreachable: " + reason, null, true);
        this.peer = peer;
    }

    /**
     * A stackless failure to reach a peer, with the transport's failure; a failed connection shares one instance
     * among its operations.
     *
     * @param peer the address of the NIC that could not be reached
     * @param reason why, e.g. {@code "connection lost"}
     * @param cause the transport's failure, shared by every operation the lost connection ended
     */
    public PeerUnreachableException(final NetworkAddress peer, final String reason, final Throwable cause) {
        super("peer " + peer + " unreachable: " + reason, cause, true);
        this.peer = peer;
    }

    /**
     * The peer NIC that failed.
     *
     * @return the address of the NIC that could not be reached
     */
    public NetworkAddress peer() {
        return peer;
    }
}
