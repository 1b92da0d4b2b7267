package dev.transferengine.transport.tcp;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

import org.jspecify.annotations.Nullable;

/**
 * One non-blocking socket of a domain with its read and write buffers. Outgoing bytes are encoded into one
 * direct buffer, so many small frames leave in one socket write; a large payload follows its header through a
 * gathering write straight from the caller's segment, never copied. Incoming bytes are read into a direct buffer
 * that holds whole headers; subclasses decide what the frames mean. Worker thread only.
 */
abstract class TcpConnection {

    /** Socket reads per readiness event, so one busy connection cannot starve the others. */
    static final int READS_PER_EVENT = 8;

    /** What every socket of the NIC shares. */
    final TcpIo io;

    final SocketChannel channel;
    /** TLS over {@link #channel}, or null for plain bytes; {@link #read} and {@link #flush} go through it. */
    final @Nullable TcpTls tls;

    final SelectionKey key;

    /** Encoded bytes: {@code [out.position(), encoded)} wait to be written; the limit stays at the capacity. */
    final ByteBuffer out;

    final MemorySegment outMemory;
    final TcpFrame outFrame;
    int encoded;

    /** Received bytes: {@code [inHead, in.position())} wait to be parsed; the limit stays at the capacity. */
    final ByteBuffer in;

    final MemorySegment inMemory;
    final TcpFrame inFrame;
    int inHead;

    private final ByteBuffer[] gather = new ByteBuffer[2];
    private @Nullable ByteBuffer large;
    private MemorySegment largeSource = MemorySegment.NULL;
    /** A view over all of the last large source: payloads from the same region re-aim it instead of a new one. */
    private MemorySegment viewed = MemorySegment.NULL;

    private @Nullable ByteBuffer view;
    private long largeNext;
    private long largeEnd;
    private boolean writeInterest;
    private boolean dirty;
    private boolean closed;
    /** Readiness was reported since the last {@link #quietNanos} check: bytes moved, or the socket closed. */
    private boolean active = true;

    private long quietSince;

    /** Takes its buffers from the domain's pool; registers (or re-attaches) the channel with the selector. */
    TcpConnection(
            final TcpIo io,
            final SocketChannel channel,
            final @Nullable TcpTls tls,
            final int interestOps,
            final int outCapacity,
            final int inCapacity)
            throws IOException {
        this.io = io;
        this.channel = channel;
        this.tls = tls;
        this.out = io.buffers().take(outCapacity);
        this.outMemory = MemorySegment.ofBuffer(out);
        this.outFrame = new TcpFrame(out);
        try {
            this.in = io.buffers().take(inCapacity);
            this.key = channel.register(io.selector(), interestOps, this);
        } catch (final IOException | RuntimeException e) {
            io.buffers().giveBack(out);
            throw e;
        }
        this.inMemory = MemorySegment.ofBuffer(in);
        this.inFrame = new TcpFrame(in);
    }

    /** Sets the options every socket of the transport uses; {@code bufferBytes} 0 leaves buffers to the kernel. */
    static void configure(final SocketChannel channel, final int bufferBytes) throws IOException {
        channel.configureBlocking(false);
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        channel.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
        if (bufferBytes > 0) {
            channel.setOption(StandardSocketOptions.SO_SNDBUF, bufferBytes);
            channel.setOption(StandardSocketOptions.SO_RCVBUF, bufferBytes);
        }
    }

    /** Handles readiness reported by the selector; returns the work done. */
    final int onReady(final int readyOps) throws IOException {
        active = true;
        int work = 0;
        if ((readyOps & SelectionKey.OP_CONNECT) != 0) {
            work += onConnectable();
        }
        if (!closed && (readyOps & SelectionKey.OP_READ) != 0) {
            work += onReadable();
        }
        if (!closed && (readyOps & SelectionKey.OP_WRITE) != 0) {
            work += flush();
        }
        if (tls != null && !closed) {
            afterTls(tls);
        }
        return work;
    }

    /**
     * What TLS needs beyond the selector: a flush once its handshake let the frames go, OP_WRITE while encrypted
     * bytes wait, and another read for decrypted bytes the selector cannot report.
     */
    private void afterTls(final TcpTls wire) {
        if (wire.takeFinished()) {
            markDirty();
        }
        if (wire.pendingOutput()) {
            writeInterest(true);
        }
        if (!wire.pipelined() && wire.pendingInput() && (readInterest() & SelectionKey.OP_READ) != 0) {
            io.readAgain(key);
        }
    }

    /**
     * Hands a TLS connection's socket to a thread of its own once the peer is authenticated, so that record crypto
     * on the worker runs beside the socket's system calls (issue 16 item 7); plain connections stay as they are. The
     * selector then reports nothing for this connection: {@link TcpIo#pollPipelined} asks {@link #pipelinedOps()}.
     *
     * @throws IOException if the thread's selector cannot be had: the connection fails
     */
    final void pipelineTls(final String peer) throws IOException {
        final TcpTls wire = tls;
        if (wire == null || wire.pipelined() || closed) {
            return;
        }
        wire.pipeline(TcpThreads.FACTORY, "te-tls-io " + io.description() + " <-> " + peer);
        io.pipelined(this);
        updateInterest();
    }

    /**
     * What a pipelined TLS connection is ready for, as the selector would report it: OP_READ while records or the
     * end of the stream wait and reading is wanted, OP_WRITE while output waits and a buffer is free.
     */
    final int pipelinedOps() {
        final TcpTls wire = tls;
        if (wire == null || closed) {
            return 0;
        }
        int ops = 0;
        if ((readInterest() & SelectionKey.OP_READ) != 0 && wire.pendingInput()) {
            ops |= SelectionKey.OP_READ;
        }
        if (writeInterest && wire.writable()) {
            ops |= SelectionKey.OP_WRITE;
        }
        return ops;
    }

    /** Reads plain bytes, through TLS if the connection has it. */
    final int read(final ByteBuffer dst) throws IOException {
        return tls == null ? channel.read(dst) : tls.read(dst);
    }

    /** Scattering {@link #read(ByteBuffer)}. */
    final long read(final ByteBuffer[] dsts) throws IOException {
        return tls == null ? channel.read(dsts) : tls.read(dsts);
    }

    int onConnectable() throws IOException {
        return 0;
    }

    abstract int onReadable() throws IOException;

    /** The connection broke or misbehaved: close it and end what depends on it. */
    abstract void lost(String reason, @Nullable Throwable cause);

    /** Interest apart from OP_WRITE. */
    abstract int readInterest();

    /** True once bytes may be written (the connect finished). */
    abstract boolean writable();

    /** Encodes queued frames into {@link #out}, possibly starting a large payload; called when all was sent. */
    void refill() {}

    /** Called after a flush made room in {@link #out}. */
    int afterFlush() throws IOException {
        return 0;
    }

    /** Asks the domain to flush this connection at its next flush step (the start of the next poll at the latest). */
    final void markDirty() {
        if (!dirty && !closed) {
            dirty = true;
            io.scheduleFlush(this);
        }
    }

    /**
     * Writes what is pending until everything is sent or the socket is full; waits for OP_WRITE in the latter
     * case. Never blocks.
     */
    final int flush() throws IOException {
        dirty = false;
        if (closed || !writable()) {
            return 0;
        }
        if (tls != null && !tls.flush()) {
            // Encrypted bytes still wait for the socket (OP_WRITE), or the TLS handshake waits for the peer (OP_READ).
            writeInterest(tls.pendingOutput());
            return 0;
        }
        int writes = 0;
        while (true) {
            if (out.position() == encoded && large == null) {
                out.clear();
                encoded = 0;
                refill();
                if (encoded == 0 && large == null) {
                    break;
                }
            }
            out.limit(encoded);
            final long offered = (long) out.remaining() + (large == null ? 0 : large.remaining());
            final long written;
            if (large == null) {
                written = tls == null ? channel.write(out) : tls.write(out);
            } else {
                gather[0] = out;
                gather[1] = large;
                written = tls == null ? channel.write(gather) : tls.write(gather);
            }
            out.limit(out.capacity());
            if (written == 0) {
                break;
            }
            writes++;
            if (large != null && !large.hasRemaining()) {
                large = nextLargeChunk();
            }
            if (written < offered) {
                break; // the socket is full: another write now would only return 0
            }
        }
        final boolean unsent = out.position() < encoded || large != null;
        writeInterest(tls == null ? unsent : tls.pendingOutput() || (unsent && !tls.handshaking()));
        return writes + afterFlush();
    }

    /** Whether encoded bytes (or a large payload, or TLS records) wait to be written. */
    final boolean unwritten() {
        return out.position() < encoded || large != null || (tls != null && tls.pendingOutput());
    }

    /** Streams {@code source[from, to)} after the bytes encoded so far. */
    final void startLarge(final MemorySegment source, final long from, final long to) {
        largeSource = source;
        largeNext = from;
        largeEnd = to;
        large = nextLargeChunk();
    }

    private @Nullable ByteBuffer nextLargeChunk() {
        if (largeNext == largeEnd) {
            largeSource = MemorySegment.NULL;
            return null;
        }
        if (largeSource.byteSize() <= Integer.MAX_VALUE) {
            if (view == null || !largeSource.equals(viewed)) {
                view = largeSource.asByteBuffer();
                viewed = largeSource;
            }
            final ByteBuffer whole = view;
            whole.limit((int) largeEnd).position((int) largeNext);
            largeNext = largeEnd;
            return whole;
        }
        // ByteBuffers address at most 2 GiB, so a payload from a larger source goes out in 1 GiB views.
        final long chunk = Math.min(largeEnd - largeNext, 1L << 30);
        final ByteBuffer slice = largeSource.asSlice(largeNext, chunk).asByteBuffer();
        largeNext += chunk;
        return slice;
    }

    /** Bytes received but not parsed yet. */
    final int buffered() {
        return in.position() - inHead;
    }

    /** Makes sure {@code room} bytes can be read after the buffered ones, moving them to the front if needed. */
    final void compactIn(final int room) {
        if (inHead == in.position()) {
            in.clear();
            inHead = 0;
        } else if (in.capacity() - in.position() < room && inHead > 0) {
            in.limit(in.position()).position(inHead);
            in.compact();
            inHead = 0;
        }
    }

    /** Moves unsent bytes to the front of {@link #out}; only valid while no large payload is pending. */
    final void compactOut() {
        final int unsent = encoded - out.position();
        if (unsent == 0) {
            out.clear();
        } else if (out.position() > 0) {
            out.limit(encoded);
            out.compact();
            out.position(0);
        }
        encoded = unsent;
    }

    final boolean closed() {
        return closed;
    }

    /**
     * How long no readiness was reported, as of {@code nowNanos}; the domain's timeout sweep asks, so the answer
     * is as exact as the sweep interval. The hot path only sets a flag.
     */
    final long quietNanos(final long nowNanos) {
        if (active) {
            active = false;
            quietSince = nowNanos;
        }
        return nowNanos - quietSince;
    }

    /** Counts as activity: the connection waited on this side, not on its peer. */
    final void touch() {
        active = true;
    }

    /** Closes the connection if a timeout of {@code settings} expired at {@code nowNanos}; returns 1 if it did. */
    abstract int expire(long nowNanos, TcpSettings settings);

    /** Closes the socket; idempotent, never throws. */
    final void closeChannel() {
        if (closed) {
            return;
        }
        closed = true;
        key.cancel();
        if (tls != null && tls.close()) {
            // The TLS socket's own thread closes it, after the records queued before (a close's last frames).
            io.onClosed(this);
            return;
        }
        try {
            channel.close();
        } catch (final IOException ignored) {
            // The socket is being discarded; there is nothing left to tell its peer.
        }
        io.onClosed(this);
    }

    /** Gives the buffers back to the pool; only once closed and outside the poll step that closed it. */
    final void releaseBuffers() {
        large = null;
        view = null;
        largeSource = MemorySegment.NULL;
        viewed = MemorySegment.NULL;
        io.buffers().giveBack(out);
        io.buffers().giveBack(in);
    }

    final void updateInterest() {
        if (closed) {
            return;
        }
        // A pipelined TLS socket's own thread waits on it; TcpIo.pollPipelined asks pipelinedOps instead.
        key.interestOps(
                tls != null && tls.pipelined() ? 0 : readInterest() | (writeInterest ? SelectionKey.OP_WRITE : 0));
    }

    private void writeInterest(final boolean wanted) {
        if (wanted != writeInterest) {
            writeInterest = wanted;
            updateInterest();
        }
    }
}
