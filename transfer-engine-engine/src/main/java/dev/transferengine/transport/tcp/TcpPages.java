package dev.transferengine.transport.tcp;

import dev.transferengine.spi.DomainListener;

import java.nio.ByteBuffer;

import org.jspecify.annotations.Nullable;

/**
 * The pages of a paged write as one WRITEV or WRITEV_IMM frame ({@link TcpFrame}): which queued requests may share
 * a frame (the sender's side, static), and the receiver's cursor through the pages of the frame it is reading. A
 * page is checked, placed, reported and answered as the WRITE, WRITE_IMM or IMM it stands for, so the receiver sees
 * the same k requests and k imm events as from k frames; the frame saves k - 1 headers, their syscalls and, with
 * the ACK that answers a run of pages at once, k - 1 answers. The imm events of a run of placed pages with one
 * reservation are reported to the listener in one {@link DomainListener#onImms} (still k events), their bytes in one
 * {@link DomainListener#onBytesReceived}. Worker thread only; allocates nothing.
 */
final class TcpPages {

    /** Pages up to this size travel in a WRITEV frame, copied next to their page header like any inline payload. */
    static final int MAX_PAGE = 16 * 1024;

    /** Pages of the frame still to come; 0 when no WRITEV is being read. */
    private int left;
    /** Bytes of the frame still to come: page headers and pages. */
    private long bytesLeft;

    private byte pageType;
    private long rkey;
    private long nextId;
    /** The frame set flags this version lacks: each of its pages is refused as malformed. */
    private boolean flagged;
    /** The region of the frame's rkey, once its first page looked it up; null before. */
    private @Nullable TcpMemory region;

    // pages placed and not yet reported: a run of equal reservations, and their bytes
    private long landedReservation = DomainListener.IMM_REFUSED;
    private int landedImms;
    private long landedBytes;

    // the page just taken
    private long offset;
    private long length;
    private int imm;

    /** True if {@code op} may travel as a page: a host write (with or without imm) small enough to copy. */
    static boolean pageable(final TcpOp op) {
        return op.chunk == null
                && (op.type == TcpFrame.WRITE || op.type == TcpFrame.WRITE_IMM || op.type == TcpFrame.IMM)
                && op.length <= MAX_PAGE;
    }

    /** True if {@code next} may follow the {@code pages} pages of {@code first}'s frame: same request, next id. */
    static boolean joins(final TcpOp first, final TcpOp next, final int pages) {
        return next.token == first.token
                && next.id == first.id + pages
                && next.rkey == first.rkey
                && pageable(next)
                && (next.type == TcpFrame.WRITE) == (first.type == TcpFrame.WRITE);
    }

    /** The frame type that carries pages of {@code first}'s type. */
    static byte frameType(final TcpOp first) {
        return first.type == TcpFrame.WRITE ? TcpFrame.WRITEV : TcpFrame.WRITEV_IMM;
    }

    /**
     * Starts on the pages of the WRITEV or WRITEV_IMM frame whose header {@code frame} holds; returns what is wrong
     * with the header (the stream is then corrupt), or null.
     */
    @Nullable String start(final TcpFrame frame) {
        final int count = frame.aux();
        final long frameLength = frame.length();
        if (count < 1
                || frameLength < (long) count * TcpFrame.PAGE_HEADER_LENGTH
                || frameLength > TcpFrame.MAX_WRITE_PAYLOAD) {
            return TcpFrame.typeName(frame.type()) + " of " + count + " pages in " + frameLength + " bytes";
        }
        left = count;
        bytesLeft = frameLength;
        pageType = frame.type() == TcpFrame.WRITEV ? TcpFrame.WRITE : TcpFrame.WRITE_IMM;
        rkey = frame.rkey();
        nextId = frame.token();
        flagged = frame.flags() != 0;
        region = null;
        return null;
    }

    /**
     * The region under the frame's rkey in {@code targets}, looked up once per frame: its pages all name that key,
     * and a region deregistered meanwhile is retired, so a live one found before is still the one registered.
     */
    @Nullable TcpMemory region(final TcpTargets targets) {
        TcpMemory memory = region;
        if (memory == null || !memory.live()) {
            memory = targets.region(rkey);
            region = memory;
        }
        return memory;
    }

    /** True while pages of a frame are still to come: the next bytes are a page header. */
    boolean reading() {
        return left > 0;
    }

    /**
     * Takes the page header at {@code at} of {@code in}; returns what is wrong with it (the stream is then corrupt),
     * or null. The page's fields are then {@link #offset()}, {@link #length()} and so on.
     */
    @Nullable String take(final ByteBuffer in, final int at) {
        offset = in.getLong(at);
        length = in.getInt(at + Long.BYTES);
        imm = pageType == TcpFrame.WRITE ? 0 : in.getInt(at + Long.BYTES + Integer.BYTES);
        bytesLeft -= TcpFrame.PAGE_HEADER_LENGTH + length;
        left--;
        nextId++;
        if (length < 0 || bytesLeft < (long) left * TcpFrame.PAGE_HEADER_LENGTH || (left == 0 && bytesLeft != 0)) {
            left = 0;
            return "a page of " + length + " bytes overruns its " + TcpFrame.typeName(pageType) + " frame";
        }
        return null;
    }

    /** The request type the page stands for: WRITE or WRITE_IMM. */
    byte pageType() {
        return pageType;
    }

    /** The request id of the page just taken. */
    long id() {
        return nextId - 1;
    }

    long rkey() {
        return rkey;
    }

    long offset() {
        return offset;
    }

    long length() {
        return length;
    }

    int imm() {
        return imm;
    }

    boolean flagged() {
        return flagged;
    }

    /**
     * A page of {@code type} (WRITE or WRITE_IMM) was placed: its imm (reservation {@code reservation}) and bytes
     * join the run to report; a reservation other than the run's reports the run first.
     */
    void landed(final byte type, final long reservation, final long length, final DomainListener listener) {
        if (type != TcpFrame.WRITE) {
            if (landedImms > 0 && reservation != landedReservation) {
                reportLanded(listener);
            }
            landedReservation = reservation;
            landedImms++;
        }
        landedBytes += length;
    }

    /** Reports the imm events and bytes of the pages placed since the last report. */
    void reportLanded(final DomainListener listener) {
        if (landedImms > 0) {
            final int imms = landedImms;
            landedImms = 0;
            listener.onImms(landedReservation, imms);
        }
        if (landedBytes > 0) {
            final long bytes = landedBytes;
            landedBytes = 0;
            listener.onBytesReceived(bytes);
        }
    }

    /** The connection closes: no page follows. */
    void clear() {
        left = 0;
        region = null;
    }
}
