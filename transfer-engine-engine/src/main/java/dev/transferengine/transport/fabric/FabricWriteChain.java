package dev.transferengine.transport.fabric;

import java.util.Arrays;

/**
 * The writes of one request to one peer and one remote key that a {@link FabricDomain} holds back until the
 * request's pieces on this NIC are all there (the next write belongs elsewhere, or the worker polls), so that it
 * can post all but a few of them transmit-complete. It remembers which held write reaches lowest and which
 * reaches highest in the remote region: those two (one when they coincide) are the writes that must go
 * delivery-complete, after the others; the domain's class comment gives the argument.
 *
 * <p>Single-threaded (the domain's worker). Allocation-free once its slot array has grown to the longest chain.
 */
final class FabricWriteChain {

    /** The most writes a chain holds: a longer request is posted in chains of this many. */
    static final int LIMIT = 1024;

    private int[] slots = new int[64];
    private int size;
    private long token;
    private long peer;
    private long rkey;
    private long lowestStart;
    private long highestEnd;
    private int lowest;
    private int highest;

    /** Whether a write of {@code writeToken} to {@code writePeer}'s {@code writeKey} may join this chain. */
    boolean accepts(final long writeToken, final long writePeer, final long writeKey) {
        return size == 0 || (size < LIMIT && token == writeToken && peer == writePeer && rkey == writeKey);
    }

    /**
     * Holds the prepared write in {@code slot}, which covers {@code [start, start + length)} of the remote region
     * ({@code length > 0}); the caller checked {@link #accepts}.
     */
    void add(
            final int slot,
            final long writeToken,
            final long writePeer,
            final long writeKey,
            final long start,
            final long length) {
        final long end = start + length;
        if (size == 0) {
            token = writeToken;
            peer = writePeer;
            rkey = writeKey;
            lowestStart = start;
            highestEnd = end;
            lowest = 0;
            highest = 0;
        } else {
            if (size == slots.length) {
                slots = Arrays.copyOf(slots, Math.min(LIMIT, size * 2));
            }
            if (Long.compareUnsigned(start, lowestStart) < 0) {
                lowestStart = start;
                lowest = size;
            }
            if (Long.compareUnsigned(end, highestEnd) > 0) {
                highestEnd = end;
                highest = size;
            }
        }
        slots[size++] = slot;
    }

    int size() {
        return size;
    }

    /** The token of the held writes; meaningful while {@link #size()} is not 0. */
    long token() {
        return token;
    }

    /** The slot of the {@code i}-th held write, in the order they were added. */
    int slot(final int i) {
        return slots[i];
    }

    /**
     * Whether the {@code i}-th held write is one that must go delivery-complete: the one starting lowest or the one
     * ending highest in the remote region (the first added of each when several tie).
     */
    boolean bounds(final int i) {
        return i == lowest || i == highest;
    }

    /** Forgets the held writes (their slots stay with the caller). */
    void clear() {
        size = 0;
    }
}
