package dev.transferengine.transport.tcp;

import dev.transferengine.NetAddr;
import dev.transferengine.TransferEngineException;
import dev.transferengine.spi.DomainListener;

import java.nio.channels.Selector;

import org.jspecify.annotations.Nullable;

/**
 * What a connection sees of the domain that owns it: where it registers and schedules its flushes, who this side
 * is, the memory and receive buffers requests land in, and the events it reports back. {@link TcpDomain}
 * implements it; a connection never reaches further into the domain. Worker thread only.
 */
interface TcpConnectionContext {

    // ---- every connection ----

    /** The selector every socket of the domain registers with. */
    Selector selector();

    /** Flushes {@code connection} at the end of the current poll step. */
    void scheduleFlush(TcpConnection connection);

    /** This side's random incarnation id, sent in its HELLO. */
    long incarnation();

    /** This side's encoded address, sent in its HELLO. */
    byte[] addressBytes();

    /** A peer broke the protocol on the connection with {@code remote}, which is closed next. */
    void onMalformed(String remote, String what);

    // ---- the connection this side opened for its own requests ----

    /** The connect to {@code peer} finished. */
    void onConnected(TcpPeer peer);

    /** The peer of our connection said HELLO. */
    void onOutboundHello(TcpPeer peer, NetAddr announced, long peerIncarnation);

    /** Ends a request: with its ACK ({@code error} null), a refusal or a failure; reports it and recycles the op. */
    void end(TcpOp op, @Nullable TransferEngineException error);

    /** Recycles an op withdrawn before any of it was sent (its operation timed out); nothing is reported. */
    void release(TcpOp op);

    /** Our connection to a peer broke; its requests were not ended yet. */
    void onOutboundLost(TcpOutbound outbound, String reason);

    // ---- connections peers opened to this side ----

    /** The registered region with this key, or null. */
    @Nullable TcpMemory region(long rkey);

    /** The posted receive buffers SENDs land in. */
    TcpReceives receives();

    /** The pinned chunks payloads for device regions land in. */
    TcpStaging staging();

    /** Where placed payloads, imms and receives are reported. */
    DomainListener listener();

    /** A peer connected to us said HELLO; returns a description of it for messages. */
    String onInboundHello(NetAddr announced, long peerIncarnation);

    /** A connection a peer opened closed for {@code reason}. */
    void onInboundClosed(TcpInbound connection, String remote, String reason);
}
