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
 * The pages of a PAGES frame share their request, rkey and imm. Worker thread only; allocates nothing.
 */
final class TcpPageFrames {

    /** The pages of the PAGES frame being encoded, in table order: their bytes follow the table. */
    private final @Nullable TcpOp[] batch = new TcpOp[TcpPageTable.MAX_PAGES];

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
