package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.DomainListener;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLException;

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

    /** Pooled read and write buffers, taken after the handshake and given back on close. */
    TcpBuffers buffers();

    /** The proofs of the handshake. */
    TcpAuthenticator authenticator();

    /**
     * TLS for a new socket to {@code peer} (null: this side accepts), or null when the NIC runs without TLS.
     *
     * @throws javax.net.ssl.SSLException if the TLS engine cannot start
     */
    @Nullable TcpTls tls(SocketChannel channel, @Nullable InetSocketAddress peer) throws SSLException;

    /** Dispatches {@code key} as readable again in this poll step: TLS holds bytes the selector cannot see. */
    void readAgain(SelectionKey key);

    /** Counts a refused connection or request, and logs it rate limited. */
    void count(TcpCounter counter, String remote, String what);

    // ---- the connection this side opened for its own requests ----

    /** The connect to {@code peer} finished. */
    void onConnected(TcpPeer peer);

    /** The peer of our connection proved the cluster key, for the address we dialled, in its CHALLENGE. */
    void onOutboundHello(TcpPeer peer, long peerIncarnation);

    /** Ends a request: with its ACK ({@code error} null), a refusal or a failure; reports it and recycles the op. */
    void end(TcpOp op, @Nullable TransferEngineException error);

    /** Recycles an op withdrawn before any of it was sent (its operation timed out); nothing is reported. */
    void release(TcpOp op);

    /** Our connection to a peer broke; its requests were not ended yet. */
    void onOutboundLost(TcpOutbound outbound, String reason);

    /** Our connection to a peer carried nothing for the idle timeout and was closed; the next post reconnects. */
    void onOutboundIdle(TcpOutbound outbound);

    // ---- connections peers opened to this side ----

    /**
     * The peer proved the cluster key: the handshake's socket becomes an inbound connection, with {@code pipelined}
     * holding the bytes that already followed the AUTH.
     */
    void onAuthenticated(
            TcpHandshake handshake,
            SocketChannel channel,
            NetworkAddress announced,
            long peerIncarnation,
            ByteBuffer pipelined);

    /** The handshake failed or was refused, and its socket is closed next. */
    void onHandshakeEnded(TcpHandshake handshake);

    /** The reads this side asked peers for, whose READ_DATA lands through its inbound connections. */
    TcpReads reads();

    /**
     * A READ from {@code reader} passed its checks: streams {@code length} bytes of {@code memory} from
     * {@code offset} back to it as READ_DATA for its read {@code readId}, on this side's own connection to it.
     */
    void serveRead(NetworkAddress reader, TcpMemory memory, long offset, long length, int readId);

    /** The registered region with this key, or null. */
    @Nullable TcpMemory region(long rkey);

    /** The posted receive buffers SENDs land in. */
    TcpReceives receives();

    /** The pinned chunks payloads for device regions land in. */
    TcpStaging staging();

    /** Where placed payloads, imms and receives are reported. */
    DomainListener listener();

    /** A connection a peer opened closed for {@code reason}. */
    void onInboundClosed(TcpInbound connection, String remote, String reason);

    /** A closed connection's buffers may be reused once the current poll step is over. */
    void onClosed(TcpConnection connection);
}
