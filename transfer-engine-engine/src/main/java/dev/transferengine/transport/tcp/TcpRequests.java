package dev.transferengine.transport.tcp;

import dev.transferengine.exceptions.TransferEngineException;

import org.jspecify.annotations.Nullable;

/**
 * The role a connection this side opened for its own requests ({@link TcpOutbound}) sees of its NIC: how its
 * requests end, and what happened to the connection. {@link TcpDomain} plays it. Worker thread only.
 */
interface TcpRequests {

    /** The connect to {@code peer} finished. */
    void onConnected(TcpPeer peer);

    /** The peer of our connection proved the cluster key, for the address we dialled, in its CHALLENGE. */
    void onOutboundHello(TcpPeer peer, long peerIncarnation);

    /** Ends a request: with its ACK ({@code error} null), a refusal or a failure; reports it and recycles the op. */
    void end(TcpOp op, @Nullable TransferEngineException error);

    /**
     * {@code pieces} writes of {@code token} (pages or small host writes, their ops already recycled) were
     * acknowledged together; reports them in one go.
     */
    void completed(long token, long bytes, int pieces);

    /** An op from the domain's pool, for a PAGES op cut into its pages. */
    TcpOp acquire();

    /** Recycles an op withdrawn before any of it was sent (its operation timed out); nothing is reported. */
    void release(TcpOp op);

    /** Our connection to a peer broke; its requests were not ended yet. */
    void onOutboundLost(TcpOutbound outbound, String reason);

    /** Our connection to a peer carried nothing for the idle timeout and was closed; the next post reconnects. */
    void onOutboundIdle(TcpOutbound outbound);
}
