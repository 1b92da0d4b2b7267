package dev.transferengine.transport.tcp;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The sender's side of page frames ({@link TcpFrame}): encodes a queued page and the queued pages that join it as one
 * PAGES or PAGES_IMM frame (a page table, then the pages) where the peer announced
 * {@link TcpFrame#FEATURE_PAGE_TABLE}, else as one WRITEV or WRITEV_IMM frame (each page behind its page header).
 * The pages of a PAGES frame share their request, rkey and imm. A PAGES op ({@link TcpDomain#writePages}) carries
 * the pages of one frame already and is encoded alone. Worker thread only; allocates nothing.
 */
final class TcpPageFrames {

    /**
     * Room left in the write buffer beside a frame of a PAGES op ({@link #pagesPerFrame}): answers carried in front
     * of the requests then rarely delay the frame to the next write.
     */
    private static final int FRAME_SLACK = 1024;

    /** The pages of the PAGES frame being encoded, in table order: their bytes follow the table. */
    private final @Nullable TcpOp[] batch = new TcpOp[TcpPageTable.MAX_PAGES];

    /**
     * Most pages of {@code pageLength} bytes (at most {@link TcpPages#MAX_PAGE}) a PAGES op carries: its frame fits
     * an empty write buffer, which is where it is encoded if it does not fit behind what is there.
     */
    static int pagesPerFrame(final long pageLength) {
        final long fit =
                (TcpBuffers.LARGE - FRAME_SLACK - TcpFrame.HEADER_LENGTH) / (TcpFrame.PAGE_ENTRY_LENGTH + pageLength);
        return (int) Math.min(TcpPageTable.MAX_PAGES, fit);
    }

    /** Bytes of the frame of the PAGES op {@code op}: header, page table and pages. */
    static int frameLength(final TcpOp op) {
        return TcpFrame.HEADER_LENGTH + op.pages * TcpFrame.PAGE_ENTRY_LENGTH + (int) op.length;
    }

    /**
     * Encodes the PAGES op {@code op} (already awaiting its answer) as one PAGES or PAGES_IMM frame into {@code out}
     * from {@code at} ({@code frame} wraps it), which has room for {@link #frameLength}: the table from the op's
     * offsets, then each page copied straight from its source. Returns where the frame ends.
     */
    static int encodePages(
            final TcpOp op, final ByteBuffer out, final MemorySegment outMemory, final TcpFrame frame, final int at) {
        final int length = (int) op.pageLength;
        int entry = at + TcpFrame.HEADER_LENGTH;
        int data = entry + op.pages * TcpFrame.PAGE_ENTRY_LENGTH;
        for (int i = 0; i < op.pages; i++) {
            out.putLong(entry, op.pageTargets[i]).putInt(entry + Long.BYTES, length);
            entry += TcpFrame.PAGE_ENTRY_LENGTH;
            MemorySegment.copy(op.source, op.pageSources[i], outMemory, data, length);
            data += length;
        }
        frame.at(at).encode(op.type, op.imm, op.pages, op.id, op.rkey, 0, data - at - TcpFrame.HEADER_LENGTH);
        return data;
    }

    /**
     * Replaces the PAGES op at the head of {@code queued} by one write per page, same ids, for a peer that reads no
     * PAGES frames ({@code tcp.pageTables} off on either side): they leave as WRITEV frames, answered page by page.
     * Allocates what the op pool lacks.
     */
    static void explode(final ArrayDeque<TcpOp> queued, final TcpRequests requests) {
        final TcpOp batch = Objects.requireNonNull(queued.pollFirst(), "a PAGES op");
        for (int i = batch.pages - 1; i >= 0; i--) {
            queued.addFirst(requests.acquire().page(batch, i));
        }
        requests.release(batch);
    }

    /** True if {@code next} may follow the {@code pages} pages of {@code first}'s PAGES frame: same imm too. */
    static boolean joinsTable(final TcpOp first, final TcpOp next, final int pages) {
        return pages < TcpPageTable.MAX_PAGES && next.imm == first.imm && TcpPages.joins(first, next, pages);
    }

    /** Bytes of a frame of {@code first} and {@code next}: what must fit before a frame of pages is worth it. */
    static int twoPages(final TcpOp first, final TcpOp next, final boolean table) {
        final int entry = table ? TcpFrame.PAGE_ENTRY_LENGTH : TcpFrame.PAGE_HEADER_LENGTH;
        return TcpFrame.HEADER_LENGTH + 2 * entry + (int) (first.length + next.length);
    }

    /**
     * Encodes {@code first} (already awaiting its answer) and the queued pages that join it, as many as {@code out}
     * holds from {@code at} ({@code frame} wraps it), as one PAGES or PAGES_IMM frame; moves them from {@code queued} to {@code awaiting}.
     * Returns where the frame ends.
     */
    int encodeTable(
            final TcpOp first,
            final ArrayDeque<TcpOp> queued,
            final ArrayDeque<TcpOp> awaiting,
            final ByteBuffer out,
            final MemorySegment outMemory,
            final TcpFrame frame,
            final int at) {
        int pages = 1;
        batch[0] = first;
        long room = out.capacity() - at - TcpFrame.HEADER_LENGTH - TcpFrame.PAGE_ENTRY_LENGTH - first.length;
        TcpOp page;
        while ((page = queued.peekFirst()) != null
                && joinsTable(first, page, pages)
                && room >= TcpFrame.PAGE_ENTRY_LENGTH + page.length) {
            queued.pollFirst();
            awaiting.addLast(page);
            room -= TcpFrame.PAGE_ENTRY_LENGTH + page.length;
            batch[pages++] = page;
        }
        int entry = at + TcpFrame.HEADER_LENGTH;
        int data = entry + pages * TcpFrame.PAGE_ENTRY_LENGTH;
        for (int i = 0; i < pages; i++) {
            final TcpOp each = Objects.requireNonNull(batch[i], "a page of the frame");
            batch[i] = null;
            out.putLong(entry, each.remoteOffset).putInt(entry + Long.BYTES, (int) each.length);
            entry += TcpFrame.PAGE_ENTRY_LENGTH;
            MemorySegment.copy(each.source, each.sourceOffset, outMemory, data, each.length);
            data += (int) each.length;
        }
        final byte type = first.type == TcpFrame.WRITE ? TcpFrame.PAGES : TcpFrame.PAGES_IMM;
        frame.at(at).encode(type, first.imm, pages, first.id, first.rkey, 0, data - at - TcpFrame.HEADER_LENGTH);
        return data;
    }

    /**
     * Encodes {@code first} (already awaiting its answer) and the queued pages that join it, as many as {@code out}
     * holds from {@code at} ({@code frame} wraps it), as one WRITEV or WRITEV_IMM frame; moves them from {@code queued} to {@code awaiting}.
     * Returns where the frame ends.
     */
    static int encodeInterleaved(
            final TcpOp first,
            final ArrayDeque<TcpOp> queued,
            final ArrayDeque<TcpOp> awaiting,
            final ByteBuffer out,
            final MemorySegment outMemory,
            final TcpFrame frame,
            final int at) {
        int encoded = at + TcpFrame.HEADER_LENGTH;
        int pages = 0;
        TcpOp page = first;
        while (true) {
            out.putLong(encoded, page.remoteOffset)
                    .putInt(encoded + Long.BYTES, (int) page.length)
                    .putInt(encoded + Long.BYTES + Integer.BYTES, page.imm);
            encoded += TcpFrame.PAGE_HEADER_LENGTH;
            MemorySegment.copy(page.source, page.sourceOffset, outMemory, encoded, page.length);
            encoded += (int) page.length;
            pages++;
            page = queued.peekFirst();
            if (page == null
                    || !TcpPages.joins(first, page, pages)
                    || out.capacity() - encoded < TcpFrame.PAGE_HEADER_LENGTH + page.length) {
                break;
            }
            queued.pollFirst();
            awaiting.addLast(page);
        }
        frame.at(at)
                .encode(
                        TcpPages.frameType(first),
                        0,
                        pages,
                        first.id,
                        first.rkey,
                        0,
                        encoded - at - TcpFrame.HEADER_LENGTH);
        return encoded;
    }
}
