package dev.transferengine.transport.tcp;

import dev.transferengine.EngineClosedException;
import dev.transferengine.MalformedDescriptorException;
import dev.transferengine.NetAddr;
import dev.transferengine.PeerUnreachableException;
import dev.transferengine.RemoteAccessException;
import dev.transferengine.TransferEngineException;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.Iterator;

import org.jspecify.annotations.Nullable;

/**
 * The connection a domain opened to one peer for its own requests: it sends HELLO, then WRITE, WRITE_IMM, IMM
 * and SEND frames, and reads the peer's HELLO and the ACK or NACK for each request, which arrive in request
 * order. Requests posted while connecting wait in a queue. Losing the connection fails every request still
 * queued or awaiting its answer. Worker thread only.
 */
final class TcpOutbound extends TcpConnection {

    private static final int OUT_CAPACITY = 256 * 1024;
    private static final int IN_CAPACITY = 64 * 1024;
    /** Payloads up to this size are copied next to their header; larger ones are written from the source. */
    private static final int INLINE_PAYLOAD = 16 * 1024;

    private final TcpPeer peer;
    private final ArrayDeque<TcpOp> queued = new ArrayDeque<>();
    private final ArrayDeque<TcpOp> awaiting = new ArrayDeque<>();
    private final long connectDeadlineNanos;
    private boolean connected;
    private boolean helloSeen;
    private long remoteIncarnation;
    private long nextId = 1;

    private TcpOutbound(final TcpConnectionContext context, final TcpPeer peer, final SocketChannel channel,
                        final boolean connected, final long connectDeadlineNanos) throws IOException {
        super(context, channel, connected ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT, OUT_CAPACITY,
            IN_CAPACITY);
        this.peer = peer;
        this.connected = connected;
        this.connectDeadlineNanos = connectDeadlineNanos;
        final byte[] self = context.addressBytes();
        outFrame.at(0).encode(TcpFrame.HELLO, 0, 0, context.incarnation(), 0, 0, self.length);
        out.put(TcpFrame.HEADER_LENGTH, self);
        encoded = TcpFrame.HEADER_LENGTH + self.length;
    }

    /**
     * Starts a non-blocking connect to {@code peer} with sockets of {@code bufferBytes} (0: the kernel's choice).
     *
     * @throws IOException if the socket cannot be opened or the connect is refused at once
     */
    static TcpOutbound connect(final TcpConnectionContext context, final TcpPeer peer, final int bufferBytes,
                               final long deadlineNanos) throws IOException {
        final SocketChannel channel = SocketChannel.open();
        try {
            configure(channel, bufferBytes);
            final boolean connected = channel.connect(peer.socketAddress());
            final TcpOutbound outbound = new TcpOutbound(context, peer, channel, connected, deadlineNanos);
            if (connected) {
                context.onConnected(peer);
            }
            return outbound;
        } catch (final IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    TcpPeer peer() {
        return peer;
    }

    /** The incarnation the peer announced on this connection, or 0 before its HELLO. */
    long remoteIncarnation() {
        return remoteIncarnation;
    }

    boolean connecting() {
        return !connected && !closed();
    }

    /** True if the connect is still pending at {@code nowNanos} past its deadline. */
    boolean connectExpired(final long nowNanos) {
        return connecting() && nowNanos - connectDeadlineNanos >= 0;
    }

    /** Queues a request; it leaves with the next flush once connected. */
    void enqueue(final TcpOp op) {
        op.id = nextId++;
        queued.addLast(op);
        markDirty();
    }

    /** Drops the requests with {@code token} that are still queued, so none of their bytes leaves; staged pieces stay. */
    void withdraw(final long token) {
        final Iterator<TcpOp> it = queued.iterator();
        while (it.hasNext()) {
            final TcpOp op = it.next();
            if (op.token == token && op.chunk == null) {
                it.remove();
                context.release(op);
            }
        }
    }

    @Override
    boolean writable() {
        return connected;
    }

    @Override
    int readInterest() {
        return connected ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT;
    }

    @Override
    int onConnectable() throws IOException {
        if (!channel.finishConnect()) {
            return 0;
        }
        connected = true;
        updateInterest();
        context.onConnected(peer);
        markDirty();
        return 1;
    }

    @Override
    void refill() {
        while (!queued.isEmpty()) {
            final TcpOp op = queued.peekFirst();
            final boolean inline = op.length <= INLINE_PAYLOAD;
            final int needed = TcpFrame.HEADER_LENGTH + (inline ? (int) op.length : 0);
            if (out.capacity() - encoded < needed) {
                return;
            }
            queued.pollFirst();
            awaiting.addLast(op);
            outFrame.at(encoded).encode(op.type, op.imm, 0, op.id, op.rkey, op.remoteOffset, op.length);
            encoded += TcpFrame.HEADER_LENGTH;
            if (!inline) {
                startLarge(op.source, op.sourceOffset, op.sourceOffset + op.length);
                return;
            }
            if (op.length > 0) {
                MemorySegment.copy(op.source, op.sourceOffset, outMemory, encoded, op.length);
                encoded += (int) op.length;
            }
        }
    }

    @Override
    int onReadable() throws IOException {
        int frames = 0;
        for (int reads = 0; reads < READS_PER_EVENT && !closed(); reads++) {
            compactIn(TcpFrame.HEADER_LENGTH + TcpFrame.MAX_HELLO_PAYLOAD);
            final int read = channel.read(in);
            if (read < 0) {
                lost("connection closed by peer", null);
                return frames + 1;
            }
            if (read == 0) {
                break;
            }
            frames += parse();
        }
        return frames;
    }

    private int parse() {
        int frames = 0;
        while (!closed() && buffered() >= TcpFrame.HEADER_LENGTH) {
            inFrame.at(inHead);
            if (!inFrame.hasValidPreamble()) {
                return frames + protocolError("bad magic or version in a frame header");
            }
            final byte type = inFrame.type();
            if (!helloSeen) {
                if (type != TcpFrame.HELLO) {
                    return frames + protocolError("expected HELLO, got " + TcpFrame.typeName(type));
                }
                if (!onHello()) {
                    return frames;
                }
            } else if (type == TcpFrame.ACK || type == TcpFrame.NACK) {
                final TcpOp op = awaiting.peekFirst();
                if (op == null || op.id != inFrame.token()) {
                    return frames + protocolError(TcpFrame.typeName(type) + " for request " + inFrame.token()
                        + ", expected " + (op == null ? "none" : Long.toString(op.id)));
                }
                final TcpRefusal refusal = type == TcpFrame.NACK ? TcpRefusal.ofCode(inFrame.aux()) : null;
                if (type == TcpFrame.NACK && refusal == null) {
                    return frames + protocolError("NACK with unknown refusal code " + inFrame.aux());
                }
                awaiting.pollFirst();
                inHead += TcpFrame.HEADER_LENGTH;
                context.end(op, refusal == null ? null : refusal(op, refusal, inFrame.length()));
            } else {
                return frames + protocolError("unexpected " + TcpFrame.typeName(type) + " from the target side");
            }
            frames++;
        }
        return frames;
    }

    /** Handles the peer's HELLO; false if it is not complete yet or broke the protocol. */
    private boolean onHello() {
        final long length = inFrame.length();
        if (length < 3 || length > TcpFrame.MAX_HELLO_PAYLOAD) {
            protocolError("HELLO of " + length + " bytes");
            return false;
        }
        if (buffered() < TcpFrame.HEADER_LENGTH + length) {
            return false;
        }
        final byte[] bytes = new byte[(int) length];
        in.get(inHead + TcpFrame.HEADER_LENGTH, bytes);
        final NetAddr announced;
        try {
            announced = NetAddr.fromBytes(bytes);
        } catch (final MalformedDescriptorException e) {
            protocolError("HELLO with a malformed address: " + e.getMessage());
            return false;
        }
        final long incarnation = inFrame.token();
        inHead += TcpFrame.HEADER_LENGTH + (int) length;
        helloSeen = true;
        remoteIncarnation = incarnation;
        context.onOutboundHello(peer, announced, incarnation);
        return true;
    }

    private RemoteAccessException refusal(final TcpOp op, final TcpRefusal refusal, final long size) {
        return new RemoteAccessException(refusal.reason(), describeRefusal(op, refusal, size));
    }

    private String describeRefusal(final TcpOp op, final TcpRefusal refusal, final long size) {
        if (op.isSend()) {
            return "peer " + peer + " refused a send of " + op.length + " bytes; largest posted receive buffer: "
                + (size < 0 ? "none" : size + " bytes");
        }
        return "peer " + peer + " refused a " + TcpFrame.typeName(op.type) + " to rkey 0x"
            + Long.toHexString(op.rkey) + " at offset " + op.remoteOffset + " of length " + op.length
            + (refusal == TcpRefusal.OUT_OF_BOUNDS || size >= 0 ? "; region size " + size : "");
    }

    private int protocolError(final String what) {
        context.onMalformed(peer.toString(), what);
        lost("protocol error: " + what, null);
        return 1;
    }

    @Override
    void lost(final String reason, final @Nullable Throwable cause) {
        if (closed()) {
            return;
        }
        closeChannel();
        context.onOutboundLost(this, reason);
        failAll(reason, cause, false);
    }

    /** Closes because the domain closes; pending requests fail with {@link EngineClosedException}. */
    void closeForShutdown() {
        if (closed()) {
            return;
        }
        closeChannel();
        failAll("domain closed", null, true);
    }

    private void failAll(final String reason, final @Nullable Throwable cause, final boolean shutdown) {
        if (awaiting.isEmpty() && queued.isEmpty()) {
            return;
        }
        // One cause for every request of the connection: building one exception each would cost a stack trace each.
        final TransferEngineException error = shutdown
            ? new EngineClosedException(reason)
            : cause == null
                ? new PeerUnreachableException(peer.address(), peer + ": " + reason)
                : new PeerUnreachableException(peer.address(), peer + ": " + reason, cause);
        TcpOp op;
        while ((op = awaiting.pollFirst()) != null || (op = queued.pollFirst()) != null) {
            context.end(op, error);
        }
    }
}
