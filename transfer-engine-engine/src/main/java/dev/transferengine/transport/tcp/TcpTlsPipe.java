package dev.transferengine.transport.tcp;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLException;

import org.jctools.queues.atomic.SpscAtomicArrayQueue;
import org.jspecify.annotations.Nullable;

/**
 * The socket side of one authenticated TLS connection, on a thread of its own: it writes the records the worker
 * encrypted and reads the records the worker will decrypt, through two rings of heap buffers handed back and forth
 * over single-producer/single-consumer queues. The worker keeps the {@code SSLEngine} (the TLS handshake, every wrap
 * and unwrap, post-handshake messages), so record crypto and socket system calls run at once instead of one after
 * the other on the worker: a connection moves bytes at the slower of the two, not at their serial sum (issue 16
 * item 7). The thread cuts what it reads at record boundaries, so every buffer the worker gets holds whole records
 * only: the unfinished record at its end moves to the front of the next buffer, the only bytes ever moved.
 *
 * <p>Threads: the worker calls {@link #send}, {@link #takeOut}, {@link #takeIn}, {@link #giveBack},
 * {@link #hasIn}, {@link #hasOut}, {@link #failure} and {@link #close}; the pipe's own thread runs {@link #run}. A
 * failure on the thread (the socket, a record longer than a buffer, anything thrown) ends it and is kept for
 * {@link #failure}, which fails the connection on the worker; closing stops the thread. Allocation-free once its
 * buffers are allocated (but for the JCE's per-record parameter objects).
 *
 * <p>Engine records ({@link TcpRecords}): on a connection that agreed on them, this thread also seals the engine
 * records the worker queued (in place, before writing them) and opens those it reads, each into a buffer of the ring
 * the worker takes plaintext from, so the worker only copies plaintext while AES-GCM runs here. A record that does
 * not open (tampered, replayed, reordered), or the end of the stream inside a record (cut), ends the reading like the
 * end of the stream: the worker gets every record before it, then the failure ({@link #endedAndDrained},
 * {@link #endCause}), never a byte of it.
 */
final class TcpTlsPipe implements Runnable {

    /**
     * Buffers per direction at most: one the worker holds, one the thread fills or drains, the rest queued between
     * them. Allocated when first needed, so an idle connection holds one per direction (issue 16 items 2 and 6: idle
     * members' connections held all eight, 2 MiB with engine records, and ~20 of them ran a 64 MiB heap out).
     */
    static final int BUFFERS = 4;

    /** Longest sleep of the thread without a wake-up: a safety net, every hand-over wakes it. */
    private static final long SLEEP_MILLIS = 10;

    private final SocketChannel channel;
    private final int capacity;
    /** Buffers of the worker's direction allocated so far (worker only): up to {@link #BUFFERS}. */
    private int outAllocated;
    /** Buffers of the thread's direction allocated so far (the thread only): up to {@link #BUFFERS}. */
    private int inAllocated;

    private final Selector selector;
    private final SelectionKey key;
    /** Encrypted records from the worker, to write in order. */
    private final SpscAtomicArrayQueue<ByteBuffer> toSocket = new SpscAtomicArrayQueue<>(BUFFERS);
    /** Written buffers back to the worker. */
    private final SpscAtomicArrayQueue<ByteBuffer> outFree = new SpscAtomicArrayQueue<>(BUFFERS);
    /** Whole records read, for the worker to decrypt. */
    private final SpscAtomicArrayQueue<ByteBuffer> fromSocket = new SpscAtomicArrayQueue<>(BUFFERS);
    /** Decrypted buffers back to the thread. */
    private final SpscAtomicArrayQueue<ByteBuffer> inFree = new SpscAtomicArrayQueue<>(BUFFERS);

    private volatile boolean stopped;
    private volatile boolean sleeping;
    /** The peer closed its side: every record read before is in {@link #fromSocket}. */
    private volatile boolean ended;

    private volatile @Nullable Throwable failure;
    /** Why the reading ended early (a record that did not open, or one out of place): read after {@link #ended}. */
    private volatile @Nullable SSLException endCause;
    /** The thread is past its loop: from now on {@link #close} closes the socket itself. */
    private volatile boolean exited;

    // The thread's own state.
    private @Nullable ByteBuffer writing;
    private @Nullable ByteBuffer filling;
    /** End of the whole TLS records at the front of {@link #filling}, handed to the worker as they are. */
    private int whole;

    /** Seals the worker's engine records; null on a connection without them. */
    private final @Nullable TcpRecordCipher sealer;
    /** Opens the peer's engine records; null on a connection without them. */
    private final @Nullable TcpRecordCipher opener;
    /** Start of the first engine record of {@link #filling} not opened yet (they follow {@link #whole}). */
    private int at;
    /** The buffer records are being opened into, for the worker; null while none is held. */
    private @Nullable ByteBuffer opened;
    /** An engine record arrived: a TLS record after it is refused. */
    private boolean switched;
    /** Opening stopped for want of a free buffer: giving one back resumes it. */
    private boolean starved;
    /** The socket reached its end: once the records before it are taken, {@link #ended}. */
    private boolean endOfStream;

    /**
     * A pipe over {@code channel} (non-blocking, open) with {@link #BUFFERS} buffers of {@code capacity} bytes per
     * direction; {@code unread} holds encrypted bytes the worker read but did not decrypt, which the thread hands over
     * first. The thread is not started.
     *
     * @throws IOException if the thread's selector cannot be opened or the channel registered with it
     */
    TcpTlsPipe(
            final SocketChannel channel,
            final int capacity,
            final ByteBuffer unread,
            final @Nullable TcpRecordCipher sealer,
            final @Nullable TcpRecordCipher opener)
            throws IOException {
        this.channel = channel;
        this.capacity = capacity;
        this.sealer = sealer;
        this.opener = opener;
        this.selector = Selector.open();
        try {
            this.key = channel.register(selector, 0);
        } catch (final IOException | RuntimeException e) {
            TcpAcceptor.closeQuietly(selector);
            throw e;
        }
        if (unread.remaining() > capacity) {
            throw new IOException("a TLS record larger than " + capacity + " bytes");
        }
        // The records the worker left are taken, like any read, by the thread's first pass.
        inAllocated = 1;
        filling = ByteBuffer.allocate(capacity).put(unread);
    }

    /** Worker: queues encrypted records ({@code [position, limit)}) for the socket; the buffer comes back later. */
    void send(final ByteBuffer records) {
        toSocket.add(records);
        wake();
    }

    /** Worker: an empty buffer to encrypt into, or null while every one is queued or being written. */
    @Nullable ByteBuffer takeOut() {
        final ByteBuffer free = outFree.poll();
        if (free != null || outAllocated == BUFFERS) {
            return free;
        }
        outAllocated++;
        return ByteBuffer.allocate(capacity);
    }

    /** Worker: whether {@link #takeOut} would give a buffer. */
    boolean hasOut() {
        return !outFree.isEmpty() || outAllocated < BUFFERS;
    }

    /** Thread: a free buffer to read or open into, allocated while fewer than {@link #BUFFERS} are; null if none. */
    private @Nullable ByteBuffer freeIn() {
        final ByteBuffer free = inFree.poll();
        if (free != null || inAllocated == BUFFERS) {
            return free;
        }
        inAllocated++;
        return ByteBuffer.allocate(capacity);
    }

    /** Thread: whether {@link #freeIn} would give a buffer. */
    private boolean hasFreeIn() {
        return !inFree.isEmpty() || inAllocated < BUFFERS;
    }

    /** Worker: the next buffer of whole records, or null if none was read yet. */
    @Nullable ByteBuffer takeIn() {
        return fromSocket.poll();
    }

    /** Worker: a buffer from {@link #takeIn}, all of it decrypted. */
    void giveBack(final ByteBuffer buffer) {
        inFree.add(buffer);
        wake();
    }

    /** Worker: records wait, or the end of the stream or a failure does. */
    boolean hasIn() {
        return !fromSocket.isEmpty() || ended || failure != null;
    }

    /** Worker: true once the peer closed and every record before was taken. */
    boolean endedAndDrained() {
        return ended && fromSocket.isEmpty();
    }

    /** Worker, once {@link #endedAndDrained}: why the reading ended before the end of the stream, or null. */
    @Nullable SSLException endCause() {
        return endCause;
    }

    /** What ended the thread, or null while it runs (or after {@link #close}). */
    @Nullable Throwable failure() {
        return stopped ? null : failure;
    }

    /**
     * Worker: stops the thread and closes the socket once what the worker queued before was offered to it (one
     * non-blocking attempt, so the frames of a close, e.g. a negative acknowledgement, still leave); the thread closes
     * the socket on its way out, or this call does if the thread has gone already. Idempotent, never blocks.
     */
    void close() {
        stopped = true;
        selector.wakeup();
        // Both sides write their flag, then read the other's (volatile, so in one order): at least one closes.
        if (exited) {
            closeChannel();
        }
    }

    @Override
    public void run() {
        try {
            while (!stopped) {
                final boolean wrote = write();
                final boolean read = read();
                if (!wrote && !read) {
                    sleep();
                }
            }
        } catch (final IOException | RuntimeException | Error e) {
            // The worker fails the connection with it: the thread never ends silently.
            failure = e;
        } finally {
            try {
                if (stopped && failure == null) {
                    write();
                }
            } catch (final IOException | RuntimeException e) {
                // Best effort: the connection is closing either way.
            }
            TcpAcceptor.closeQuietly(selector);
            exited = true;
            if (stopped) {
                closeChannel();
            }
        }
    }

    private void closeChannel() {
        try {
            channel.close();
        } catch (final IOException ignored) {
            // The socket is being discarded; there is nothing left to tell its peer.
        }
    }

    /** Writes queued records until the socket is full; true if bytes moved. */
    private boolean write() throws IOException {
        boolean moved = false;
        while (true) {
            ByteBuffer current = writing;
            if (current == null) {
                current = toSocket.poll();
                if (current == null) {
                    return moved;
                }
                final TcpRecordCipher cipher = sealer;
                if (cipher != null) {
                    seal(current, cipher);
                }
                writing = current;
            }
            if (channel.write(current) > 0) {
                moved = true;
            }
            if (current.hasRemaining()) {
                return moved;
            }
            writing = null;
            outFree.add(current.clear());
        }
    }

    /** Seals the engine records among {@code records}' {@code [position, limit)}; TLS records pass as they are. */
    private static void seal(final ByteBuffer records, final TcpRecordCipher sealer) throws SSLException {
        final int end = records.limit();
        int next = records.position();
        while (next < end) {
            final int length = TcpRecords.wireLength(records, next, end);
            if (records.get(next) == TcpRecords.TYPE) {
                sealer.seal(records.array(), records.arrayOffset() + next, length - TcpRecords.HEADER - TcpRecords.TAG);
            }
            next += length;
        }
    }

    /** Reads into the buffer being filled, then hands over or opens its whole records; true if bytes moved. */
    @SuppressWarnings("ReferenceEquality") // whether this very buffer is still the one being filled (not handed over)
    private boolean read() throws IOException {
        if (ended) {
            return false;
        }
        ByteBuffer current = filling;
        if (current == null) {
            current = freeIn();
            if (current == null) {
                return false;
            }
            filling = current.clear();
            whole = 0;
            at = 0;
        }
        boolean moved = false;
        if (current.hasRemaining() && !endOfStream) {
            final int read = channel.read(current);
            endOfStream = read < 0;
            moved = read > 0;
        }
        moved |= process(current);
        if (ended) {
            return true; // a record was refused
        }
        if (endOfStream && !starved) {
            // Every whole record went to the worker; what follows the last can never complete.
            final int cut = filling == current ? current.position() - at : 0;
            if (whole > 0) {
                fromSocket.add(current.limit(whole).position(0));
                filling = null;
            }
            if (cut > 0) {
                // Ended inside a record: cut on the way (a man in the middle can do it), or the peer stopped
                // mid-write. A failure, so that it is counted and logged; the end between records is a close.
                endCause = new SSLException("the stream ended inside a record (" + cut + " bytes of it arrived): "
                        + "cut on the way, or the peer stopped mid-write");
            }
            ended = true;
            return true;
        }
        return moved;
    }

    /**
     * Takes the whole records of {@code current} in order: TLS records stay for the worker (handed over in a run),
     * engine records are opened into {@link #opened}; the unfinished record at the end moves to the front. True if
     * records moved.
     */
    private boolean process(final ByteBuffer current) {
        starved = false;
        boolean moved = false;
        final int end = current.position();
        int length;
        while (true) {
            length = TcpRecords.wireLength(current, at, end);
            if (length > current.capacity()) {
                return refuse(
                        current,
                        new SSLException("a record of " + length + " bytes, more than the " + current.capacity()
                                + " a buffer of this connection holds"));
            }
            if (length < 0 || end - at < length) {
                break;
            }
            final TcpRecordCipher cipher = opener;
            if (current.get(at) != TcpRecords.TYPE || cipher == null) {
                // A TLS record (or an engine record where none were agreed: JSSE refuses it in order).
                if (switched) {
                    return refuse(current, new SSLException("a TLS record after the peer's engine records"));
                }
                at += length;
                whole = at;
                continue;
            }
            if (whole > 0) {
                // The TLS records before the switch go to the worker first, as they are; the rest moves on.
                starved = !handOver(current);
                return !starved;
            }
            final int plaintext = length - TcpRecords.HEADER - TcpRecords.TAG;
            ByteBuffer into = opened;
            if (into != null && into.remaining() < TcpRecords.HEADER + plaintext) {
                fromSocket.add(into.flip());
                opened = null;
                into = null;
                moved = true;
            }
            if (into == null) {
                into = freeIn();
                if (into == null) {
                    starved = true; // the worker holds the others: giving one back wakes this thread
                    break;
                }
                opened = into.clear();
            }
            final int put = into.position();
            try {
                cipher.open(current, at, length - TcpRecords.HEADER, into, put + TcpRecords.HEADER);
            } catch (final SSLException e) {
                return refuse(current, e);
            }
            into.put(put, TcpRecords.TYPE).putInt(put + 1, plaintext).position(put + TcpRecords.HEADER + plaintext);
            switched = true;
            at += length;
            moved = true;
        }
        if (whole > 0) {
            // Whole records go to the worker at once: while it decrypts slower than the socket delivers, the queue
            // is full and this buffer fills up before a buffer comes back, so hand-overs stay large by themselves.
            starved = !handOver(current);
            moved |= !starved;
        } else if (at > 0 && (at == end || at + Math.max(length, TcpRecords.HEADER) > current.capacity())) {
            // The unfinished record does not fit behind: move it (usually a part of one) to the front.
            final int base = current.arrayOffset();
            System.arraycopy(current.array(), base + at, current.array(), base, end - at);
            current.position(end - at);
            at = 0;
        }
        final ByteBuffer into = opened;
        if (into != null && into.position() > 0) {
            fromSocket.add(into.flip());
            opened = null;
            moved = true;
        }
        return moved;
    }

    /**
     * Ends the reading in order: the worker gets what was opened or whole before, then {@code cause}; nothing of
     * the refused record or after it.
     */
    private boolean refuse(final ByteBuffer current, final SSLException cause) {
        final ByteBuffer into = opened;
        if (into != null && into.position() > 0) {
            fromSocket.add(into.flip());
        }
        opened = null;
        if (whole > 0) {
            fromSocket.add(current.limit(whole).position(0));
            filling = null;
        }
        endCause = cause;
        ended = true;
        return true;
    }

    /** Hands the whole TLS records of {@code current} over; false while no buffer is free for the unfinished rest. */
    private boolean handOver(final ByteBuffer current) {
        final int end = current.position();
        ByteBuffer next = null;
        if (end > whole) {
            next = freeIn();
            if (next == null) {
                return false; // the worker holds the others: giving one back wakes this thread
            }
            next.clear();
            next.put(0, current, whole, end - whole).position(end - whole);
        }
        fromSocket.add(current.limit(whole).position(0));
        filling = next;
        whole = 0;
        at = 0;
        return true;
    }

    /** Waits for the socket or the worker; the worker's hand-overs wake it ({@link #wake}). */
    private void sleep() throws IOException {
        final ByteBuffer current = filling;
        final boolean room = current != null ? current.hasRemaining() : hasFreeIn();
        key.interestOps(
                (writing != null ? SelectionKey.OP_WRITE : 0) | (room && !endOfStream ? SelectionKey.OP_READ : 0));
        sleeping = true;
        // Announce, then look again: a hand-over queued before the announcement is seen here, one queued after it
        // sees the announcement and wakes the selector.
        if (!stopped && ((writing == null && !toSocket.isEmpty()) || ((current == null || starved) && hasFreeIn()))) {
            sleeping = false;
            return;
        }
        if (!stopped) {
            selector.select(TcpTlsPipe::ignore, SLEEP_MILLIS);
        }
        sleeping = false;
    }

    private void wake() {
        // The queue's offer is an ordered store, the flag a volatile load: a full fence keeps them in this order.
        VarHandle.fullFence();
        if (sleeping) {
            selector.wakeup();
        }
    }

    /** The thread looks at its socket after every wake-up, whichever key the selector reports. */
    private static void ignore(final SelectionKey selected) {}
}
