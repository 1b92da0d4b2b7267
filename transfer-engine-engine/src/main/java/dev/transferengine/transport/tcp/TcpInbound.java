package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.spi.DeviceCopyStream;
import dev.transferengine.spi.DomainListener;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A connection a peer opened to this domain, once the peer passed the handshake ({@link TcpHandshake}): it reads
 * the peer's requests and answers each, in order, with ACK or NACK. A request's rkey, bounds and access (or, for a
 * SEND, a fitting receive buffer; for a READ_DATA, a read this side has pending from that peer) are checked
 * from its header before any byte of the payload is placed; the payload is then read from the socket straight
 * into the target memory. A refused request's payload is read into the read buffer and discarded, so the target
 * stays untouched. A corrupt stream (bad magic, version, type or absurd length) closes the connection. When the
 * peer stops reading answers, this side stops reading requests. Worker thread only.
 */
final class TcpInbound extends TcpConnection {

    /**
     * After a payload this large another large one is likely, so the read that ends it takes only one more
     * header: the next payload then lands in place instead of in the read buffer.
     */
    private static final long LARGE_PAYLOAD = 64 * 1024;

    private static final int AT_HEADER = 0;
    private static final int PLACING = 1;
    private static final int DISCARDING = 2;
    private static final String PLACING_TARGET = "a payload being placed has its target";

    /** The ACK or NACK of each request, in order; held back behind payloads still travelling to the device. */
    private final TcpAnswers answers;
    /** Where an ABANDON frame's cause text lands; it is reported as soon as it is in. */
    private final TcpMemory abandonCause = new TcpMemory(MemorySegment.ofArray(new byte[TcpFrame.MAX_ABANDON_CAUSE]));

    private final ByteBuffer[] scatter = new ByteBuffer[2];
    /** The pages of the WRITEV or WRITEV_IMM frame being read. */
    private final TcpPages pages = new TcpPages();
    /** The page table of the PAGES or PAGES_IMM frame being read. */
    private final TcpPageTable table = new TcpPageTable();

    private final TcpTargets targets;
    private final TcpLanding landing;
    /** This peer's account in the NIC's receive buffers, shared fairly between peers. */
    private final TcpReceives.Share share;

    private final String remote;
    private final NetworkAddress peerAddress;
    private final TcpHandshake.Connector connector;
    private int state = AT_HEADER;
    private boolean paused;
    /** Reading stopped because a device payload waits for a free staging chunk. */
    private boolean starved;

    private boolean lastPayloadLarge;
    /** The last socket read returned less than it had room for: the socket is empty (plain TCP only). */
    private boolean drained;
    /** The request being read is a page of a WRITEV frame: its ACK may extend the one before. */
    private boolean paging;

    private byte type;
    private long id;
    private int imm;
    /** The reservation of the imm of the request being placed; {@code IMM_REFUSED} while none is held. */
    private long immReservation = DomainListener.IMM_REFUSED;

    private long rkey;
    private long offset;
    private long length;
    private @Nullable TcpMemory target;
    private long receiveToken;
    private long position;
    private long end;
    private long discard;
    private TcpRefusal refusal = TcpRefusal.MALFORMED;
    private long refusalSize;

    /**
     * Takes over the socket of a finished handshake; {@code pipelined} holds the bytes that followed the AUTH.
     *
     * @throws IOException if the buffers cannot be had
     */
    TcpInbound(
            final TcpIo io,
            final TcpTargets targets,
            final SocketChannel channel,
            final @Nullable TcpTls tls,
            final TcpHandshake.Connector connector,
            final String remote,
            final ByteBuffer pipelined)
            throws IOException {
        super(io, channel, tls, SelectionKey.OP_READ, TcpBuffers.SMALL, TcpBuffers.LARGE);
        this.peerAddress = connector.address();
        this.connector = connector;
        this.remote = remote;
        this.targets = targets;
        this.landing = new TcpLanding(targets.staging());
        this.share = targets.receives().join();
        this.answers = new TcpAnswers(this, targets, connector);
        in.put(pipelined);
    }

    /** The address the peer announced in its handshake. */
    NetworkAddress peerAddress() {
        return peerAddress;
    }

    /**
     * A frame that stalls half-read for the frame timeout, or a connection that carried nothing for the idle
     * timeout, is closed. Waiting on this side (answers the peer does not read, device copies) is not stalling.
     */
    @Override
    int expire(final long nowNanos, final TcpSettings settings) {
        if (paused || starved || answers.holding()) {
            touch();
        }
        final long quiet = quietNanos(nowNanos);
        final boolean midFrame = state != AT_HEADER || buffered() > 0 || pages.reading();
        if (midFrame && quiet >= settings.frameTimeoutNanos()) {
            io.count(TcpCounter.FRAME_TIMEOUT, remote, "a frame stalled half-read for " + quiet / 1_000_000 + " ms");
            lost("frame stalled", null);
            return 1;
        }
        if (!midFrame && settings.idleTimeoutNanos() > 0 && quiet >= settings.idleTimeoutNanos()) {
            io.count(TcpCounter.IDLE_CLOSED, remote, "idle for " + quiet / 1_000_000 + " ms");
            lost("idle for " + quiet / 1_000_000 + " ms", null);
            return 1;
        }
        return 0;
    }

    @Override
    boolean writable() {
        return true;
    }

    @Override
    int readInterest() {
        return paused || starved ? 0 : SelectionKey.OP_READ;
    }

    /**
     * Reads and acts on what came. Returns the frames finished, or 1 when bytes came but finished none: a worker that
     * saw no work in the reads of a large payload parked mid-frame until its timer (issue 22: 20-30 % of a stream).
     */
    @Override
    int onReadable() throws IOException {
        int frames = 0;
        boolean bytesCame = false;
        for (int reads = 0; !closed(); reads++) {
            frames += consume();
            if (closed() || paused || starved || reads == READS_PER_EVENT) {
                break;
            }
            final long read = state == PLACING && buffered() == 0 ? readIntoTarget() : readIntoBuffer();
            if (read < 0) {
                lost("connection closed by peer", null);
                break;
            }
            if (read == 0) {
                break;
            }
            touch(); // bytes came, whether or not a select reported them
            bytesCame = true;
            if (drained) {
                // less than there was room for: another read would return 0 (a syscall per small request saved)
                frames += consume();
                break;
            }
        }
        pages.reportLanded(targets.listener()); // before the ACKs of these pages can leave
        return bytesCame ? Math.max(frames, 1) : frames;
    }

    /** True if the domain may read this connection without a select: plain, open and reading. */
    boolean readsUnselected() {
        return tls == null && !closed() && readInterest() != 0;
    }

    @Override
    int afterFlush() throws IOException {
        if (paused && !closed() && answers.hasRoom()) {
            paused = false;
            updateInterest();
            return onReadable();
        }
        return 0;
    }

    private long readIntoBuffer() throws IOException {
        compactIn(TcpAnswers.ANSWER_ROOM);
        if (state == AT_HEADER && lastPayloadLarge && buffered() < TcpFrame.HEADER_LENGTH) {
            // Read just the next header: if another large payload follows, it then lands in place, not in here.
            in.limit(in.position() + TcpFrame.HEADER_LENGTH - buffered());
        }
        final int room = in.remaining();
        final int read = read(in);
        in.limit(in.capacity());
        drained = tls == null && read < room;
        return read;
    }

    /** Reads the rest of a payload straight into its target, and what follows it into the read buffer. */
    private long readIntoTarget() throws IOException {
        final TcpMemory memory = Objects.requireNonNull(target, PLACING_TARGET);
        final boolean device = memory.device() >= 0;
        final ByteBuffer window = device ? landing.window() : memory.window(position, end);
        if (window == null) {
            starve();
            return 0;
        }
        in.clear();
        inHead = 0;
        // after a large payload only the next header, however little is left: what followed would be copied again
        in.limit(!table.active() && length >= LARGE_PAYLOAD ? TcpFrame.HEADER_LENGTH : in.capacity());
        final int before = window.position();
        scatter[0] = window;
        scatter[1] = in;
        final long room = (long) window.remaining() + in.remaining();
        final long read = read(scatter);
        in.limit(in.capacity());
        drained = tls == null && read < room;
        final int placed = window.position() - before;
        position += placed;
        if (device && placed > 0) {
            landing.advance(placed);
        }
        return read;
    }

    /** Parses and acts on buffered bytes; returns the frames finished. */
    private int consume() {
        int frames = 0;
        while (!closed()) {
            if (state == AT_HEADER) {
                final boolean page = pages.reading();
                if (buffered() < (page ? TcpFrame.PAGE_HEADER_LENGTH : TcpFrame.HEADER_LENGTH)) {
                    return frames;
                }
                if (!answers.hasRoom()) {
                    paused = true;
                    updateInterest();
                    return frames;
                }
                if (!(page ? beginPage() : begin())) {
                    return frames;
                }
                if (state == AT_HEADER) {
                    frames++;
                    continue;
                }
            }
            if (state == PLACING) {
                final TcpMemory memory = Objects.requireNonNull(target, PLACING_TARGET);
                if (!memory.live()) {
                    landing.abandon();
                    refuse(TcpRefusal.REGION_DEREGISTERED, memory.size());
                    discard = end - position + (table.active() ? table.bytesAfter() : 0); // the frame's pages, whole
                    continue;
                }
                final int available = (int) Math.min(buffered(), end - position);
                final int taken = available == 0 ? 0 : landing.place(memory, inMemory, inHead, position, available);
                inHead += taken;
                position += taken;
                if (!memory.live()) {
                    continue; // its memory was lost before a staged copy: refused above, never acknowledged
                }
                if (position < end) {
                    if (taken < available) {
                        starve();
                    }
                    return frames;
                }
                if (table.active() && table.advance()) {
                    placePage(memory);
                    continue;
                }
                placed();
            } else {
                final int skipped = (int) Math.min(buffered(), discard);
                inHead += skipped;
                discard -= skipped;
                if (discard > 0) {
                    return frames;
                }
                refuseInOrder();
            }
            state = AT_HEADER;
            lastPayloadLarge = !table.active() && length >= LARGE_PAYLOAD; // a PAGES frame's pages are small
            table.clear();
            frames++;
        }
        return frames;
    }

    /** Starts on the frame at {@link #inHead}; false if it must wait for more bytes or broke the protocol. */
    private boolean begin() {
        inFrame.at(inHead);
        if (!inFrame.hasValidPreamble()) {
            return malformed("bad magic or version in a frame header");
        }
        final byte frameType = inFrame.type();
        final long frameLength = inFrame.length();
        switch (frameType) {
            case TcpFrame.WRITE, TcpFrame.WRITE_IMM, TcpFrame.IMM -> {
                if (frameLength < 0
                        || frameLength > TcpFrame.MAX_WRITE_PAYLOAD
                        || (frameType == TcpFrame.IMM && frameLength != 0)) {
                    return malformed(TcpFrame.typeName(frameType) + " with length " + frameLength);
                }
                admitWrite(frameType, takeHeader());
            }
            case TcpFrame.WRITEV, TcpFrame.WRITEV_IMM -> {
                final String problem = pages.start(inFrame);
                if (problem != null) {
                    return malformed(problem);
                }
                inHead += TcpFrame.HEADER_LENGTH; // its pages follow, each with its page header
            }
            case TcpFrame.PAGES, TcpFrame.PAGES_IMM -> {
                return beginPages(frameType);
            }
            case TcpFrame.SEND -> {
                if (frameLength < 0 || frameLength > Integer.MAX_VALUE) {
                    return malformed("SEND with length " + frameLength);
                }
                final boolean flagged = takeHeader();
                final TcpReceives.Posted posted =
                        flagged ? null : targets.receives().takeFitting(length, share);
                if (flagged) {
                    refuse(TcpRefusal.MALFORMED, -1);
                } else if (posted == null) {
                    refuse(TcpRefusal.NO_RECEIVE_BUFFER, targets.receives().largest());
                } else {
                    receiveToken = posted.token();
                    place(posted.memory(), 0);
                }
            }
            case TcpFrame.READ -> {
                if (frameLength < 0 || frameLength > TcpFrame.MAX_WRITE_PAYLOAD) {
                    return malformed("READ with length " + frameLength);
                }
                serve(takeHeader());
            }
            case TcpFrame.READ_DATA -> {
                if (frameLength < 0 || frameLength > TcpFrame.MAX_WRITE_PAYLOAD) {
                    return malformed("READ_DATA with length " + frameLength);
                }
                final boolean flagged = takeHeader();
                final TcpReads.Pending read =
                        flagged ? null : targets.reads().landing(imm, peerAddress, offset, length);
                if (flagged) {
                    refuse(TcpRefusal.MALFORMED, -1);
                } else if (read == null) {
                    // no such read pending from this peer (ended, fenced, or never asked), or it would not fit
                    refuse(TcpRefusal.UNKNOWN_KEY, -1);
                } else {
                    receiveToken = read.id;
                    place(read.memory, read.at + offset);
                }
            }
            case TcpFrame.READ_FAILED -> {
                final TcpReadFailure why = TcpReadFailure.ofCode(inFrame.aux());
                if (!connector.sendsReadFailures() || frameLength != 0 || why == null) {
                    return malformed("READ_FAILED with length " + frameLength + " and reason code " + inFrame.aux()
                            + (connector.sendsReadFailures() ? "" : " from a peer that did not agree to them"));
                }
                endRead(takeHeader(), why);
            }
            case TcpFrame.REVERSE_ACK -> {
                final int count = inFrame.aux();
                if (!connector.readsReverseAcks() || count < 1 || frameLength < 0 || inFrame.flags() != 0) {
                    return malformed("REVERSE_ACK for " + count + " requests of " + frameLength + " bytes"
                            + (connector.readsReverseAcks() ? "" : " from a peer that did not agree to them"));
                }
                inHead += TcpFrame.HEADER_LENGTH; // an answer: nothing to place, nothing to answer
                targets.onReverseAck(peerAddress, inFrame.rkey(), inFrame.token(), count, frameLength);
            }
            case TcpFrame.ABANDON -> {
                if (frameLength < 0 || frameLength > TcpFrame.MAX_ABANDON_CAUSE || inFrame.rkey() < 1) {
                    return malformed("ABANDON with length " + frameLength + " and count " + inFrame.rkey());
                }
                if (takeHeader()) {
                    refuse(TcpRefusal.MALFORMED, -1);
                } else {
                    place(abandonCause, 0);
                }
            }
            default -> {
                return malformed("unexpected " + TcpFrame.typeName(frameType) + " from the initiator side");
            }
        }
        return true;
    }

    /** Starts on a PAGES frame once its whole table is in; false if it must wait for more bytes or broke the protocol. */
    private boolean beginPages(final byte frameType) {
        final int head = TcpPageTable.headLength(inFrame, connector.sendsPageTables());
        if (head > buffered()) {
            compactIn(head - buffered()); // the whole table is read before a page is placed
            return false;
        }
        final String problem = head < 0 ? TcpPageTable.problem(inFrame) : table.take(inFrame, in, inHead);
        if (problem != null) {
            return malformed(problem);
        }
        final boolean flagged = takeHeader();
        inHead += head - TcpFrame.HEADER_LENGTH;
        length = table.bytes();
        admitWrite(frameType, flagged);
        return true;
    }

    /** Starts on the next page of a WRITEV frame as on a WRITE of its own; false if it broke the protocol. */
    private boolean beginPage() {
        final String problem = pages.take(in, inHead);
        if (problem != null) {
            return malformed(problem);
        }
        inHead += TcpFrame.PAGE_HEADER_LENGTH;
        type = pages.pageType();
        id = pages.id();
        imm = pages.imm();
        rkey = pages.rkey();
        offset = pages.offset();
        length = pages.length();
        paging = true;
        admitWrite(type, pages.flagged());
        return true;
    }

    /**
     * The region a WRITE or READ addresses, or null once it refused the request as malformed, for an unknown key or
     * out of bounds (the checks both share, in this order).
     */
    private @Nullable TcpMemory addressed(final boolean flagged) {
        final TcpMemory memory = flagged ? null : paging ? pages.region(targets) : targets.region(rkey);
        if (flagged) {
            refuse(TcpRefusal.MALFORMED, -1);
        } else if (memory == null) {
            refuse(TcpRefusal.UNKNOWN_KEY, -1);
        } else if (!(table.active() ? table.fits(memory) : memory.contains(offset, length))) {
            refuse(TcpRefusal.OUT_OF_BOUNDS, memory.size());
        } else {
            return memory;
        }
        return null;
    }

    /**
     * Checks a write's key, bounds, access and imm admission, then places its payload or refuses it. A PAGES frame is
     * checked whole, every page's bounds and one imm admission for all its pages: it is placed or refused whole.
     */
    private void admitWrite(final byte frameType, final boolean flagged) {
        final TcpMemory memory = addressed(flagged);
        if (memory == null) {
            return;
        }
        if (!memory.access().allowsRemoteWrite()) {
            refuse(TcpRefusal.NOT_WRITABLE, -1);
        } else if (frameType != TcpFrame.WRITE
                && frameType != TcpFrame.PAGES
                && (immReservation = table.active()
                                ? targets.listener().reserveImms(peerAddress, imm, table.count())
                                : targets.listener().reserveImm(peerAddress, imm))
                        == DomainListener.IMM_REFUSED) {
            // Before a byte is placed: a refused write leaves memory untouched and loses nothing silently.
            refuse(TcpRefusal.IMM_NOT_ADMITTED, -1);
        } else if (table.active()) {
            placePage(memory);
        } else {
            place(memory, offset);
        }
    }

    /** Places the current page of the PAGES frame, as {@link #place} a payload of its own. */
    private void placePage(final TcpMemory memory) {
        final long at = table.offset();
        if (memory.device() >= 0 && table.length() > 0) {
            landing.start(memory, at, table.length());
        }
        target = memory;
        position = at;
        end = at + table.length();
        state = PLACING;
    }

    /** The requests the frame being read stands for: the pages of a PAGES frame, else 1. */
    private int requests() {
        return table.active() ? table.count() : 1;
    }

    /**
     * A READ: checked as a WRITE is, then streamed back and ACKed, or NACKed, in order; it has no payload. A reader
     * that announced READ_FAILED is told at once if this side has no room to connect back to it (tcp.maxPeers).
     */
    private void serve(final boolean flagged) {
        final TcpMemory memory = addressed(flagged);
        if (memory != null && memory.device() >= 0 && !TcpStaging.holds(memory)) {
            refuse(TcpRefusal.REGION_DEREGISTERED, memory.size()); // freed while registered: maybe reused already
        } else if (memory != null && !memory.access().allowsRemoteRead()) {
            refuse(TcpRefusal.NOT_READABLE, -1);
        } else if (memory != null && targets.serveRead(peerAddress, memory, offset, length, imm)) {
            acceptRead();
            return;
        } else if (memory != null && connector.sendsReadFailures()) {
            refuse(TcpRefusal.NO_PEER_ROOM, -1); // counted as back-pressure
        } else if (memory != null) {
            // a reader that cannot be told waits for its deadline, as before READ_FAILED
            io.count(TcpCounter.BACK_PRESSURE, remote, "READ of " + length + " bytes not served: no peer room");
            acceptRead();
            return;
        }
        discard = 0;
    }

    /** ACKs the READ just read, behind the answers still held back. */
    private void acceptRead() {
        if (answers.holding()) {
            answers.hold(held(TcpFrame.READ, 0, DomainListener.IMM_REFUSED, length, null, 0));
        } else {
            answer(TcpFrame.ACK, 1, length);
        }
    }

    /**
     * A READ_FAILED: the peer stopped serving a read of ours part-way. It ends in order, behind the answers held for
     * READ_DATA still travelling to the device, so the read fails only once the bytes sent before are in place.
     */
    private void endRead(final boolean flagged, final TcpReadFailure why) {
        if (flagged) {
            refuse(TcpRefusal.MALFORMED, -1);
        } else if (answers.holding()) {
            receiveToken = imm; // the read id, as for its READ_DATA
            answers.hold(held(TcpFrame.READ_FAILED, why.code(), DomainListener.IMM_REFUSED, 0, null, 0));
        } else {
            targets.reads().stopped(peerAddress, imm, why);
            answer(TcpFrame.ACK, 1, 0);
        }
    }

    /** Copies the request's header fields and consumes it; returns true if it sets flags this version lacks. */
    private boolean takeHeader() {
        type = inFrame.type();
        id = inFrame.token();
        imm = inFrame.imm();
        rkey = inFrame.rkey();
        offset = inFrame.offset();
        length = inFrame.length();
        final boolean flagged = inFrame.flags() != 0;
        inHead += TcpFrame.HEADER_LENGTH;
        paging = false;
        return flagged;
    }

    private void place(final TcpMemory memory, final long at) {
        if (memory.device() >= 0 && length > 0) {
            landing.start(memory, at, length);
        }
        target = memory;
        position = at;
        end = at + length;
        state = PLACING;
    }

    private void refuse(final TcpRefusal reason, final long size) {
        releaseReservation();
        io.count(
                TcpCounter.of(reason),
                remote,
                TcpFrame.typeName(type) + " of " + length + " bytes at offset " + offset);
        target = null;
        refusal = reason;
        refusalSize = size;
        discard = length;
        state = DISCARDING;
    }

    /** NACKs the discarded request, behind the answers still held back: answers go in request order. */
    private void refuseInOrder() {
        if (answers.holding()) {
            answers.hold(held(TcpFrame.NACK, refusal.code(), DomainListener.IMM_REFUSED, refusalSize, null, 0));
        } else {
            answer(TcpFrame.NACK, refusal.code(), refusalSize);
        }
    }

    private void starve() {
        starved = true;
        updateInterest();
    }

    /**
     * The payload is in place: report it, then acknowledge. A payload for a device region is reported only once
     * its last copy to the device finished; answers after it wait too, as answers go in order.
     */
    private void placed() {
        final TcpMemory memory = target;
        target = null;
        if (type == TcpFrame.ABANDON) {
            // told at once, before data still held back for the device: the sender gave up on it anyway
            targets.abandoned(peerAddress, imm, rkey, abandonCause.segment().asSlice(0, length));
        }
        final boolean device = memory != null && length > 0 && memory.device() >= 0;
        final long reservation = immReservation;
        immReservation = DomainListener.IMM_REFUSED; // the answer holds it now
        if (paging && !device && !answers.holding()) {
            pages.landed(
                    type, reservation, length, targets.listener()); // reported with the run, before the answer leaves
            answer(TcpFrame.ACK, 1, length);
            return;
        }
        pages.reportLanded(targets.listener()); // what landed before is reported first
        if (device || answers.holding()) {
            answers.hold(held(
                    type, imm, reservation, length, device ? landing.stream() : null, device ? landing.ticket() : 0));
            return;
        }
        targets.deliver(type, reservation, length, receiveToken, requests());
        answer(TcpFrame.ACK, requests(), length);
    }

    /**
     * Resumes reading once a staging chunk is free again, then reports and acknowledges, in order, the held-back
     * payloads whose device copies finished.
     */
    int drainStaged() {
        int work = 0;
        if (starved && !closed() && targets.staging().hasFreeIn()) {
            starved = false;
            updateInterest();
            try {
                work += onReadable();
            } catch (final IOException e) {
                lost(e.getMessage() == null ? e.toString() : e.getMessage(), e);
                return work + 1;
            }
        }
        return work + answers.release();
    }

    private void answer(final byte answerType, final int aux, final long lengthField) {
        answers.answer(answerType, aux, requests(), id, lengthField, paging || table.active());
    }

    /** Holds back the answer to the request just read: its id, rkey, offset and receive buffer. */
    private TcpHeldAnswer held(
            final byte answerType,
            final int answerImm,
            final long reservation,
            final long answerLength,
            final @Nullable DeviceCopyStream stream,
            final long ticket) {
        return new TcpHeldAnswer(
                answerType, id, answerImm, reservation, answerLength, receiveToken, stream, ticket, requests());
    }

    private boolean malformed(final String what) {
        io.count(TcpCounter.MALFORMED_FRAMES, remote, what);
        lost("malformed frame: " + what, null);
        return false;
    }

    @Override
    void lost(final String reason, final @Nullable Throwable cause) {
        if (!closed()) {
            closeForShutdown();
            targets.onInboundClosed(this, remote, reason);
        }
    }

    /** Closes the connection as its domain closes: gives back the imm reservations of what was never reported. */
    void closeForShutdown() {
        closeChannel();
        targets.receives().leave(share);
        landing.abandon();
        releaseReservation();
        table.clear();
        answers.abandon(); // placed, but never reported or acknowledged
    }

    /** Gives back the reservation of the request being placed, which will not be reported. */
    private void releaseReservation() {
        if (immReservation != DomainListener.IMM_REFUSED) {
            targets.listener().releaseImms(immReservation, requests());
            immReservation = DomainListener.IMM_REFUSED;
        }
    }
}
