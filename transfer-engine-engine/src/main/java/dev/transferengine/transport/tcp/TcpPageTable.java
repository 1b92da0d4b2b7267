package dev.transferengine.transport.tcp;

import java.nio.ByteBuffer;

import org.jspecify.annotations.Nullable;

/**
 * The receiver's side of one PAGES or PAGES_IMM frame ({@link TcpFrame}): its page table, read whole before a byte
 * is placed, the checks that admit the frame whole or not at all, and the cursor through its pages as they are
 * placed. A frame is one request to the rest of {@link TcpInbound}: one reservation, one report, one answer for its
 * {@code count} requests. Worker thread only; allocates nothing.
 */
final class TcpPageTable {

    /** Most pages one frame carries: its table (12 KiB) always fits the read buffer beside a header. */
    static final int MAX_PAGES = 1024;

    private final long[] offsets = new long[MAX_PAGES];
    private final int[] lengths = new int[MAX_PAGES];
    /** Pages of the frame being read; 0 when none is. */
    private int count;
    /** The page being placed. */
    private int next;
    /** The pages' bytes together. */
    private long bytes;

    /**
     * Bytes of the header and table of the frame whose header {@code frame} holds, or -1 if the header is wrong
     * ({@link #problem}: the stream is then corrupt) or the connector did not agree to PAGES frames ({@code agreed} false).
     */
    static int headLength(final TcpFrame frame, final boolean agreed) {
        final int pages = frame.aux();
        return !agreed || pages < 1 || pages > MAX_PAGES || frame.length() < 0
                ? -1
                : TcpFrame.HEADER_LENGTH + pages * TcpFrame.PAGE_ENTRY_LENGTH;
    }

    /** What is wrong with the header {@code frame} holds, which {@link #headLength} refused. */
    static String problem(final TcpFrame frame) {
        return TcpFrame.typeName(frame.type()) + " of " + frame.aux() + " pages in " + frame.length()
                + " bytes, or from a peer that did not agree to them";
    }

    /**
     * Takes the table of the frame whose header {@code frame} holds at {@code at} of {@code in}, the table behind
     * it; returns what is wrong with it (the stream is then corrupt), or null.
     */
    @Nullable String take(final TcpFrame frame, final ByteBuffer in, final int at) {
        final int pages = frame.aux();
        long sum = 0;
        for (int i = 0; i < pages; i++) {
            final int entry = at + TcpFrame.HEADER_LENGTH + i * TcpFrame.PAGE_ENTRY_LENGTH;
            offsets[i] = in.getLong(entry);
            lengths[i] = in.getInt(entry + Long.BYTES);
            if (lengths[i] < 0) {
                return TcpFrame.typeName(frame.type()) + " page " + i + " of " + lengths[i] + " bytes";
            }
            sum += lengths[i];
        }
        if (frame.length() != (long) pages * TcpFrame.PAGE_ENTRY_LENGTH + sum) {
            return TcpFrame.typeName(frame.type()) + " of " + pages + " pages of " + sum + " bytes in " + frame.length()
                    + " bytes";
        }
        count = pages;
        bytes = sum;
        next = 0;
        return null;
    }

    /** True if every page lies inside {@code memory}: the frame is refused out of bounds otherwise. */
    boolean fits(final TcpMemory memory) {
        for (int i = 0; i < count; i++) {
            if (!memory.contains(offsets[i], lengths[i])) {
                return false;
            }
        }
        return true;
    }

    /** True while a frame's pages are being placed. */
    boolean active() {
        return count > 0;
    }

    int count() {
        return count;
    }

    /** The pages' bytes together. */
    long bytes() {
        return bytes;
    }

    /** True if a page follows the one placed last: {@link #offset()} and {@link #length()} are then its own. */
    boolean advance() {
        next++;
        return next < count;
    }

    /** Bytes of the pages after the current one: discarded when the frame is refused while placed. */
    long bytesAfter() {
        long after = 0;
        for (int i = next + 1; i < count; i++) {
            after += lengths[i];
        }
        return after;
    }

    /** Where the current page goes in its region. */
    long offset() {
        return offsets[next];
    }

    int length() {
        return lengths[next];
    }

    /** The frame was placed, refused or lost: no page follows. */
    void clear() {
        count = 0;
    }
}
