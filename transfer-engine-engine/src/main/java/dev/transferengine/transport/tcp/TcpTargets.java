package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.spi.DomainListener;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * The role a connection a peer opened to this side ({@link TcpHandshake}, then {@link TcpInbound}) sees of its NIC:
 * where requests land, where they are reported, and what happened to the connection. {@link TcpAcceptor} plays
 * it. Worker thread only.
 */
interface TcpTargets {

    /** The registered region with this key, or null. */
    @Nullable TcpMemory region(long rkey);

    /** The posted receive buffers SENDs land in. */
    TcpReceives receives();

    /** The pinned chunks payloads for device regions land in. */
    TcpStaging staging();

    /** Where placed payloads, imms and receives are reported. */
    DomainListener listener();

    /**
     * Reports a request whose payload is in place: a SEND as a receive, a WRITE's bytes, a WRITE_IMM's imm (by its
     * {@code reservation}) and bytes, a READ_DATA to the read waiting for it; a PAGES frame's bytes, a PAGES_IMM
     * frame's {@code count} imm events and bytes. ABANDON and READ report nothing here.
     */
    default void deliver(
            final byte frameType, final long reservation, final long length, final long token, final int count) {
        if (frameType == TcpFrame.ABANDON || frameType == TcpFrame.READ) {
            return; // reported when placed; a served READ reports nothing here
        }
        if (frameType == TcpFrame.READ_DATA) {
            reads().landed((int) token, length);
        } else if (frameType == TcpFrame.SEND) {
            listener().onReceive(token, (int) length);
        } else {
            if (frameType == TcpFrame.PAGES_IMM) {
                listener().onImms(reservation, count);
            } else if (frameType != TcpFrame.WRITE && frameType != TcpFrame.PAGES) {
                listener().onImm(reservation);
            }
            if (length > 0) {
                listener().onBytesReceived(length);
            }
        }
    }

    /**
     * Reports an ABANDON from {@code peer}: its operation carrying {@code imm} failed, {@code missing} imm events
     * will not come, for the reason {@code cause} holds as UTF-8 text.
     */
    default void abandoned(final NetworkAddress peer, final int imm, final long missing, final MemorySegment cause) {
        listener()
                .onImmAbandoned(
                        peer,
                        imm,
                        (int) Math.min(Integer.MAX_VALUE, missing),
                        new String(cause.toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8));
    }

    /** The reads this side asked peers for, whose READ_DATA lands through the connections peers opened. */
    TcpReads reads();

    /**
     * A READ from {@code reader} passed its checks: streams {@code length} bytes of {@code memory} from
     * {@code offset} back to it as READ_DATA for its read {@code readId}, on this side's own connection to it; false,
     * serving nothing, if this side has no room for that connection ({@code tcp.maxPeers}).
     */
    boolean serveRead(NetworkAddress reader, TcpMemory memory, long offset, long length, int readId);

    /**
     * The peer proved the cluster key: the handshake's socket becomes an inbound connection, with {@code pipelined}
     * holding the bytes that already followed the AUTH.
     */
    void onAuthenticated(
            TcpHandshake handshake, SocketChannel channel, TcpHandshake.Connector connector, ByteBuffer pipelined);

    /**
     * True if an ACK for a request of {@code peer} (of incarnation {@code incarnation}) may wait for a request of
     * this side to carry it back ({@link TcpFrame#REVERSE_ACK}): our connection to it agreed to them and this side
     * posted to it lately, so one is likely to leave soon.
     */
    boolean mayHoldAck(NetworkAddress peer, long incarnation);

    /**
     * A REVERSE_ACK from {@code peer} answers {@code count} requests from id {@code first} of this side's connection
     * {@code connectionId} to it; dropped if that connection is gone (its requests were ended with it).
     */
    void onReverseAck(NetworkAddress peer, long connectionId, long first, int count, long bytes);

    /** The handshake failed or was refused, and its socket is closed next. */
    void onHandshakeEnded(TcpHandshake handshake);

    /** A connection a peer opened closed for {@code reason}. */
    void onInboundClosed(TcpInbound connection, String remote, String reason);
}
