package dev.transferengine.transport.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

import org.jspecify.annotations.Nullable;

/**
 * TLS between one non-blocking socket and the frame protocol: {@link #read} and {@link #write} take and give plain
 * bytes like the socket's own methods, and drive the TLS handshake first (on whichever of them the selector calls),
 * so the connections above keep their code and only swap the socket for this. The HMAC handshake of
 * {@link TcpFrame} still runs on top: TLS protects every frame, the cluster key still proves membership.
 *
 * <p>What plain sockets do not have: bytes may wait in here on both sides. {@link #pendingOutput()} says that
 * encrypted bytes wait for the socket (the owner keeps OP_WRITE interest); {@link #pendingInput()} says that
 * decrypted bytes wait for a read the selector will not report, so the domain re-dispatches the connection.
 * Holds three heap buffers of one TLS record each (about 17 KiB each) from the first bytes on; once the handshake is
 * over the two for encrypted bytes grow to {@value #RECORDS_PER_IO} records, so that one system call moves several
 * records. A read whose destination has room for a whole record decrypts straight into it, not through the third
 * buffer, and the records a read brought in are decrypted where they lie: only the unfinished record at the end moves,
 * once, before the next read (issue 16, item 7). The buffers stay on the heap: JSSE's AES-GCM takes its AES-NI path
 * on arrays, and through 768-byte copies on direct buffers. Delegated tasks (certificate checks) run inline on the
 * worker. Once the connection is authenticated, {@link #pipeline} hands the socket to a thread of its own
 * ({@link TcpTlsPipe}): the buffers for encrypted bytes then come from its rings and this class no longer calls the
 * socket, so wraps and unwraps here overlap with its system calls. With engine records agreed ({@link TcpRecords}),
 * each direction switches once pipelined: the server at once (its switch record), the client once that arrived (the
 * server is authenticated then, with buffers for large records); JSSE then handles nothing of a switched direction
 * (no key update, no close_notify: a close is the end of the stream). Worker thread only.
 */
final class TcpTls {

    private static final ByteBuffer[] NOTHING = {ByteBuffer.allocate(0)};
    /** TLS records one socket read or write moves at most after the TLS handshake: ~134 KiB per buffer. */
    private static final int RECORDS_PER_IO = 8;

    private final SocketChannel channel;
    private final SSLEngine engine;
    /**
     * Encrypted bytes from the socket not decrypted yet: {@code [position, limit)}. Unwraps take records from the
     * front in place; {@link #readNet()} appends after the limit.
     */
    private ByteBuffer netIn;
    /** Encrypted bytes for the socket: {@code [position, limit)} wait to be written. */
    private ByteBuffer netOut;
    /** Decrypted bytes not handed out yet: {@code [position, limit)}. */
    private ByteBuffer appIn;

    private boolean handshaking = true;
    private boolean finishedSinceAsked;
    /** The last unwrap wanted more bytes than netIn holds, and none came since: netIn alone cannot progress. */
    private boolean underflow;

    private boolean eof;
    /** The one destination of a single-buffer read, reused. */
    private final ByteBuffer[] single = {NOTHING[0]};
    /** The one source of a single-buffer write, reused: a frame without payload (an ACK) allocates nothing. */
    private final ByteBuffer[] singleSource = {NOTHING[0]};
    /** The encrypted-byte buffers grew to {@value #RECORDS_PER_IO} records. */
    private boolean grown;

    /**
     * The socket's thread once the connection is authenticated ({@link #pipeline}), null before: then {@link #netIn}
     * and {@link #netOut} are buffers of its rings, and this class no longer touches the socket.
     */
    private @Nullable TcpTlsPipe pipe;

    /** {@link #netIn} while no ring buffer is held: empty, no capacity (ring buffers have some). */
    private final ByteBuffer noIn = ByteBuffer.allocate(0);

    /** {@link #netOut} while no ring buffer is held: empty, no capacity (ring buffers have some). */
    private final ByteBuffer noOut = ByteBuffer.allocate(0);

    /** Both sides agreed on engine records and this connection is pipelined. */
    private boolean engineRecords;
    /** This side writes engine records only. */
    private boolean outputSwitched;
    /** The switch record leaves before the next engine record. */
    private boolean switchPending;
    /** The peer's switch record arrived: only opened engine records follow. */
    private boolean inputSwitched;
    /** Plaintext of the opened record at {@link #netIn}'s position not handed out yet. */
    private int plainLeft;
    /** Plaintext bytes JSSE took from this side: the switch record names them. */
    private long jsseSent;
    /** Plaintext bytes JSSE gave out: the peer's switch record must name them. */
    private long jsseReceived;

    TcpTls(final SocketChannel channel, final SSLEngine engine) throws SSLException {
        this.channel = channel;
        this.engine = engine;
        final int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocate(packet).limit(0);
        this.netOut = ByteBuffer.allocate(packet).limit(0);
        this.appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize())
                .limit(0);
        engine.beginHandshake();
    }

    /** Reads decrypted bytes into {@code dst}; 0 if none are ready (or the TLS handshake is still going), -1 at end. */
    int read(final ByteBuffer dst) throws IOException {
        if (!ready()) {
            return eof ? -1 : 0;
        }
        if (!inputSwitched && !appIn.hasRemaining() && dst.remaining() >= appIn.capacity()) {
            single[0] = dst;
            final long direct = unwrapInto(single);
            single[0] = NOTHING[0];
            if (direct != 0) {
                return (int) direct;
            }
        }
        if (!inputSwitched && !appIn.hasRemaining()) {
            fill();
        }
        if (inputSwitched) {
            // JSSE's bytes were all handed out before the switch record: appIn is empty from here on.
            single[0] = dst;
            try {
                return (int) readOpened(single);
            } finally {
                single[0] = NOTHING[0];
            }
        }
        if (appIn.hasRemaining()) {
            return transfer(dst);
        }
        return eof ? -1 : 0;
    }

    /** Scattering {@link #read(ByteBuffer)}: fills {@code dsts} in order. */
    long read(final ByteBuffer[] dsts) throws IOException {
        if (!ready()) {
            return eof ? -1 : 0;
        }
        if (!inputSwitched && !appIn.hasRemaining() && TcpRecords.room(dsts) >= appIn.capacity()) {
            final long direct = unwrapInto(dsts);
            if (direct != 0) {
                return direct;
            }
        }
        if (!inputSwitched && !appIn.hasRemaining()) {
            fill();
        }
        if (inputSwitched) {
            return readOpened(dsts);
        }
        if (!appIn.hasRemaining()) {
            return eof ? -1 : 0;
        }
        long moved = 0;
        for (final ByteBuffer dst : dsts) {
            moved += transfer(dst);
            if (!appIn.hasRemaining()) {
                break;
            }
        }
        return moved;
    }

    /**
     * Decrypts records straight into {@code dsts} while they have room for a whole record: the copy through
     * {@link #appIn} is what made TLS cost most of its throughput. Returns the bytes placed, -1 at the end of the
     * stream with none placed, 0 if none could be (the caller then goes through {@link #appIn}).
     */
    private long unwrapInto(final ByteBuffer[] dsts) throws IOException {
        long placed = 0;
        while (!eof && TcpRecords.room(dsts) >= appIn.capacity()) {
            if (!netIn.hasRemaining() || underflow) {
                final int read = readNet();
                if (read < 0) {
                    eof = true;
                    break;
                }
                if (read == 0) {
                    break;
                }
                continue;
            }
            if (takeSwitch()) {
                break;
            }
            final SSLEngineResult result;
            try {
                result = engine.unwrap(netIn, dsts);
            } catch (final SSLException e) {
                throw alerted(e);
            }
            placed += result.bytesProduced();
            jsseReceived += result.bytesProduced();
            switch (result.getStatus()) {
                case OK -> {
                    if (engine.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING) {
                        // A post-handshake message (a session ticket, a key update) may want an answer.
                        handshaking = true;
                        if (!ready()) {
                            return placed;
                        }
                    }
                }
                case BUFFER_UNDERFLOW -> underflow = true;
                case BUFFER_OVERFLOW -> {
                    return placed;
                }
                case CLOSED -> eof = true;
            }
        }
        return placed == 0 && eof ? -1 : placed;
    }

    /** Encrypts and writes {@code src}; returns the plain bytes taken, which may sit encrypted in here a while. */
    int write(final ByteBuffer src) throws IOException {
        singleSource[0] = src;
        try {
            return (int) write(singleSource);
        } finally {
            singleSource[0] = NOTHING[0];
        }
    }

    /**
     * Encrypts and writes {@code srcs} in order, a record at a time, until they are taken or the socket is full;
     * returns the plain bytes taken. Bytes taken are in here: the caller may reuse its buffers.
     */
    long write(final ByteBuffer[] srcs) throws IOException {
        if (!ready() || !flushNet()) {
            return 0;
        }
        if (outputSwitched) {
            return writeRecords(srcs);
        }
        long taken = 0;
        final int packet = engine.getSession().getPacketBufferSize();
        while (TcpRecords.remaining(srcs)) {
            // As many records as fit, then one write: a write per 16 KiB record was a system call per record.
            netOut.clear();
            long consumed;
            do {
                final SSLEngineResult result;
                try {
                    result = engine.wrap(srcs, netOut);
                } catch (final SSLException e) {
                    netOut.flip();
                    throw alerted(e);
                }
                if (result.getStatus() != SSLEngineResult.Status.OK) {
                    netOut.flip();
                    throw new SSLException("TLS wrap " + result.getStatus() + " with " + taken + " bytes taken");
                }
                consumed = result.bytesConsumed();
                taken += consumed;
            } while (consumed > 0 && TcpRecords.remaining(srcs) && netOut.remaining() >= packet);
            netOut.flip();
            if (consumed == 0 && !netOut.hasRemaining()) {
                // A key update or the like wants the handshake first.
                handshaking = true;
                if (!ready()) {
                    break;
                }
            }
            if (!flushNet()) {
                break;
            }
        }
        jsseSent += taken;
        return taken;
    }

    /**
     * Copies {@code srcs} into engine records for the socket's thread to seal (header, plaintext, room for the tag),
     * as many as each of its buffers holds, the switch record first when it is due; returns the plain bytes taken.
     */
    private long writeRecords(final ByteBuffer[] srcs) throws IOException {
        long taken = 0;
        while (switchPending || TcpRecords.remaining(srcs)) {
            // flushNet left an empty buffer of the socket's thread here.
            netOut.clear().limit(0);
            if (switchPending) {
                TcpRecords.putSwitch(netOut, jsseSent);
                switchPending = false;
            }
            taken += TcpRecords.putRecords(netOut, srcs);
            if (!flushNet()) {
                break;
            }
        }
        return taken;
    }

    /** Hands out the plaintext of engine records the socket's thread opened (their tags checked there): a copy. */
    private long readOpened(final ByteBuffer[] dsts) throws IOException {
        long placed = 0;
        while (true) {
            if (plainLeft == 0) {
                if (!netIn.hasRemaining()) {
                    final int read = readNet();
                    if (read < 0) {
                        eof = true;
                        return placed == 0 ? -1 : placed;
                    }
                    if (read == 0) {
                        return placed;
                    }
                    continue;
                }
                plainLeft = TcpRecords.takeOpened(netIn);
            }
            final int n = TcpRecords.copyOut(netIn, dsts, plainLeft);
            if (n == 0) {
                return placed;
            }
            plainLeft -= n;
            placed += n;
        }
    }

    /**
     * Whether the peer's switch record is next: takes it, checking that the peer sent through JSSE exactly the bytes
     * that arrived (JSSE records cut off before it fail the connection); from now on only opened engine records
     * come, and a client switches its own output too (the server switched first).
     */
    private boolean takeSwitch() throws SSLException {
        if (!engineRecords || !netIn.hasRemaining() || netIn.get(netIn.position()) != TcpRecords.TYPE) {
            return false;
        }
        final long sent = TcpRecords.takeSwitch(netIn);
        if (sent != jsseReceived) {
            throw new SSLException("the peer switched to engine records after sending " + sent
                    + " bytes through TLS, but " + jsseReceived + " arrived");
        }
        inputSwitched = true;
        if (!outputSwitched) {
            outputSwitched = true;
            switchPending = true;
        }
        return true;
    }

    /**
     * Encrypted bytes wait for the socket: keep OP_WRITE interest and call {@link #flush()} when writable. Once
     * pipelined: no buffer is free to encrypt into, call {@link #flush()} when {@link #writable()}.
     */
    boolean pendingOutput() {
        return netOut.hasRemaining() || (pipe != null && netOut.capacity() == 0);
    }

    /**
     * Starts the socket's own thread (made by {@code threads}, named {@code name}): from now on the worker only
     * encrypts and decrypts, the thread reads and writes (see {@link TcpTlsPipe}). Called once the connection is
     * authenticated, so that only members hold the thread and its buffers (one per direction while idle, up to
     * {@link TcpTlsPipe#BUFFERS} when busy).
     *
     * @throws IOException if the thread's selector cannot be had
     */
    void pipeline(final ThreadFactory threads, final String name) throws IOException {
        if (pipe != null) {
            throw new IllegalStateException("a TLS connection pipelined twice");
        }
        engineRecords = TcpRecords.negotiated(engine);
        final TcpTlsPipe started = engineRecords
                ? new TcpTlsPipe(
                        channel,
                        TcpRecords.BUFFER,
                        netIn,
                        TcpRecordCipher.of(engine, true),
                        TcpRecordCipher.of(engine, false))
                : new TcpTlsPipe(
                        channel, RECORDS_PER_IO * engine.getSession().getPacketBufferSize(), netIn, null, null);
        netIn = noIn;
        final ByteBuffer unsent = netOut;
        netOut = noOut;
        pipe = started;
        if (unsent.hasRemaining()) {
            final ByteBuffer first = Objects.requireNonNull(started.takeOut());
            started.send(first.put(unsent).flip());
        }
        flushNet();
        if (engineRecords && !engine.getUseClientMode()) {
            // The server switches first; its switch record, with its first bytes, tells the client that it may send
            // large records. Not sent before (a write to a peer that already closed would fail the reads it left).
            outputSwitched = true;
            switchPending = true;
        }
        final Thread thread = threads.newThread(started);
        thread.setName(name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Whether the socket's own thread reads and writes: the selector then reports nothing for the connection. */
    boolean pipelined() {
        return pipe != null;
    }

    /** Whether both directions run on engine records: the peer's switch record came and this side's left. */
    boolean switched() {
        return inputSwitched && outputSwitched && !switchPending;
    }

    /** Once pipelined: whether {@link #flush()} could encrypt (a buffer is held or free). */
    boolean writable() {
        final TcpTlsPipe running = pipe;
        return running != null && (netOut.capacity() > 0 || running.hasOut());
    }

    /** Once pipelined: what ended the socket's thread, or null while it runs. */
    @Nullable Throwable pipeFailure() {
        final TcpTlsPipe running = pipe;
        return running == null ? null : running.failure();
    }

    /**
     * Once pipelined: stops the socket's thread, which closes the socket after offering it the records queued
     * before; returns false if not pipelined (the caller closes the socket). Idempotent.
     */
    boolean close() {
        final TcpTlsPipe running = pipe;
        if (running == null) {
            return false;
        }
        running.close();
        return true;
    }

    /** Writes waiting encrypted bytes and moves the TLS handshake on; true once nothing waits. */
    boolean flush() throws IOException {
        return ready() && flushNet();
    }

    /** Decrypted bytes, or encrypted ones that may decrypt, wait although the socket may have nothing new. */
    boolean pendingInput() {
        final TcpTlsPipe running = pipe;
        return appIn.hasRemaining() || (netIn.hasRemaining() && !underflow) || (running != null && running.hasIn());
    }

    /** The TLS handshake (or a post-handshake exchange) is still going: frames wait for it. */
    boolean handshaking() {
        return handshaking;
    }

    /** True once after the TLS handshake finished: writes that waited for it may go now. */
    boolean takeFinished() {
        final boolean finished = finishedSinceAsked;
        finishedSinceAsked = false;
        return finished;
    }

    /** Moves the TLS handshake as far as the socket allows; true once it is over. */
    private boolean ready() throws IOException {
        if (!handshaking) {
            return true;
        }
        while (true) {
            switch (engine.getHandshakeStatus()) {
                case NOT_HANDSHAKING, FINISHED -> {
                    handshaking = false;
                    finishedSinceAsked = true;
                    grow();
                    return true;
                }
                case NEED_TASK -> {
                    Runnable task;
                    while ((task = engine.getDelegatedTask()) != null) {
                        task.run();
                    }
                }
                case NEED_WRAP -> {
                    if (outputSwitched) {
                        throw new SSLException("the peer's TLS wants an answer (a key update) after this side "
                                + "switched to engine records");
                    }
                    if (!flushNet()) {
                        return false;
                    }
                    final SSLEngineResult result = wrap(NOTHING);
                    if (result.getStatus() == SSLEngineResult.Status.CLOSED && !netOut.hasRemaining()) {
                        throw new SSLException("TLS closed during the handshake");
                    }
                    if (!flushNet()) {
                        return false;
                    }
                }
                case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                    if (!unwrap()) {
                        return false;
                    }
                }
            }
        }
    }

    /**
     * Gives the encrypted-byte buffers room for {@value #RECORDS_PER_IO} records once, after the first TLS handshake:
     * only connections that got this far pay for it, never a pending handshake.
     */
    private void grow() {
        if (grown) {
            return;
        }
        grown = true;
        final int capacity = RECORDS_PER_IO * engine.getSession().getPacketBufferSize();
        netIn = ByteBuffer.allocate(capacity).put(netIn).flip();
        netOut = ByteBuffer.allocate(capacity).put(netOut).flip();
    }

    /** Decrypts into {@link #appIn} until it holds bytes or the socket has no more. */
    private void fill() throws IOException {
        while (!appIn.hasRemaining() && !eof) {
            if (!unwrap()) {
                return;
            }
            if (engine.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING) {
                // A post-handshake message (a session ticket, a key update) may want an answer.
                handshaking = true;
                if (!ready()) {
                    return;
                }
            }
        }
    }

    /** One unwrap, reading from the socket if the buffered record is incomplete; false if nothing moved. */
    private boolean unwrap() throws IOException {
        while (true) {
            if (netIn.hasRemaining() && !underflow) {
                if (takeSwitch()) {
                    return false;
                }
                appIn.compact();
                final SSLEngineResult result;
                try {
                    result = engine.unwrap(netIn, appIn);
                } catch (final SSLException e) {
                    throw alerted(e);
                } finally {
                    appIn.flip();
                }
                jsseReceived += result.bytesProduced();
                switch (result.getStatus()) {
                    case OK -> {
                        return true;
                    }
                    case BUFFER_UNDERFLOW -> underflow = true;
                    case BUFFER_OVERFLOW -> {
                        if (appIn.hasRemaining()) {
                            return false;
                        }
                        // The peer negotiated larger records than the session first said.
                        final int size = engine.getSession().getApplicationBufferSize();
                        if (size <= appIn.capacity()) {
                            throw new SSLException("a TLS record does not fit " + appIn.capacity() + " bytes");
                        }
                        appIn = ByteBuffer.allocate(size).limit(0);
                    }
                    case CLOSED -> {
                        eof = true;
                        return true;
                    }
                }
                continue;
            }
            final int read = readNet();
            if (read < 0) {
                eof = true;
                return false;
            }
            if (read == 0) {
                return false;
            }
        }
    }

    /**
     * Reads encrypted bytes after those {@link #netIn} holds, first moving the unfinished record at its front to the
     * start (the only bytes ever moved); the socket's result, and a new record may be complete when it is positive.
     */
    private int readNet() throws IOException {
        final TcpTlsPipe running = pipe;
        if (running != null) {
            return takeNet(running);
        }
        if (netIn.position() > 0) {
            netIn.compact().flip();
        }
        if (netIn.limit() == netIn.capacity()) {
            throw new SSLException("a TLS record larger than " + netIn.capacity() + " bytes");
        }
        final int start = netIn.limit();
        netIn.position(start).limit(netIn.capacity());
        final int read;
        try {
            read = channel.read(netIn);
        } finally {
            netIn.limit(netIn.position()).position(0);
        }
        if (read > 0) {
            underflow = false;
        }
        return read;
    }

    /**
     * Once pipelined: gives the decrypted buffer back and takes the next from the socket's thread; its bytes, 0 if
     * none came yet, -1 at the end of the stream. The thread hands over whole records only.
     */
    private int takeNet(final TcpTlsPipe running) throws IOException {
        if (netIn.hasRemaining()) {
            throw new SSLException("a TLS record split across the socket thread's buffers");
        }
        if (netIn.capacity() > 0) {
            running.giveBack(netIn);
            netIn = noIn;
        }
        final ByteBuffer next = running.takeIn();
        if (next == null) {
            if (!running.endedAndDrained()) {
                return 0;
            }
            final SSLException cause = running.endCause();
            if (cause != null) {
                // The socket's thread refused a record: everything before it was handed out, nothing of it.
                throw new SSLException(cause.getMessage(), cause);
            }
            return -1;
        }
        netIn = next;
        underflow = false;
        return next.remaining();
    }

    /** Encrypts into the empty {@link #netOut}; a failure (also one a delegated task left) alerts the peer. */
    private SSLEngineResult wrap(final ByteBuffer[] srcs) throws SSLException {
        netOut.clear();
        final SSLEngineResult result;
        try {
            result = engine.wrap(srcs, netOut);
        } catch (final SSLException e) {
            throw alerted(e);
        }
        netOut.flip();
        return result;
    }

    /** Tells the peer why (the alert the engine prepared), so its error names the cause; best effort. */
    private SSLException alerted(final SSLException e) {
        try {
            netOut.clear();
            engine.wrap(NOTHING, netOut);
            netOut.flip();
            flushNet();
        } catch (final IOException ignored) {
            // The connection fails with e either way.
            netOut.clear().limit(0);
        }
        return e;
    }

    private boolean flushNet() throws IOException {
        final TcpTlsPipe running = pipe;
        if (running != null) {
            // Hand what was encrypted to the socket's thread and hold an empty buffer for the next records.
            if (netOut.hasRemaining()) {
                running.send(netOut);
                netOut = noOut;
            }
            if (netOut.capacity() == 0) {
                final ByteBuffer free = running.takeOut();
                if (free == null) {
                    return false;
                }
                netOut = free.limit(0);
            }
            return true;
        }
        while (netOut.hasRemaining()) {
            if (channel.write(netOut) == 0) {
                return false;
            }
        }
        return true;
    }

    private int transfer(final ByteBuffer dst) {
        final int n = Math.min(appIn.remaining(), dst.remaining());
        if (n == 0) {
            return 0;
        }
        final int limit = appIn.limit();
        appIn.limit(appIn.position() + n);
        dst.put(appIn);
        appIn.limit(limit);
        return n;
    }
}
