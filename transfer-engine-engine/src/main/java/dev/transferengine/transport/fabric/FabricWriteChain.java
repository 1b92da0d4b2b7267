package dev.transferengine.transport.fabric;

import java.util.Arrays;

/**
 * The writes of one request to one peer and one remote key that a {@link FabricDomain} holds back until the
 * request's pieces on this NIC are all there (the next write belongs elsewhere, or the worker polls), so that it
 * can post all but one or two of them transmit-complete. While writes are added it remembers which one starts lowest
 * and which one ends highest in the remote region; {@link #seal(boolean)} moves those two (one when they coincide) to
 * the end, as the writes to post delivery-complete, or, where every write's range is checked before it is posted,
 * keeps the order and marks the last write alone; the chain is then posted strictly in that order from
 * {@link #next()} on, however often the provider turns a post away. The domain's class comment gives the argument.
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
    /** After {@link #seal(boolean)}: the index of the first write to post delivery-complete; -1 before. */
    private int firstBound = -1;

    private int next;

    /** Whether a write of {@code writeToken} to {@code writePeer}'s {@code writeKey} may join this chain. */
    boolean accepts(final long writeToken, final long writePeer, final long writeKey) {
        return size == 0
                || (firstBound < 0 && size < LIMIT && token == writeToken && peer == writePeer && rkey == writeKey);
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

    /**
     * Ends the chain: the other writes keep the order they were added in, then come the one that starts lowest and
     * the one that ends highest in the remote region (the first added of each where several tie). With
     * {@code rangesChecked} (the target's keys, bounds and access were checked for every write before posting, see
     * {@link FabricShmKeys}) nothing moves and only the last write added is to post delivery-complete: it is there for
     * the order alone. Posting starts at the first write.
     */
    void seal(final boolean rangesChecked) {
        if (rangesChecked) {
            lowest = size - 1;
            highest = size - 1;
        }
        final int lowSlot = slots[lowest];
        final int highSlot = slots[highest];
        int to = 0;
        for (int i = 0; i < size; i++) {
            if (i != lowest && i != highest) {
                slots[to++] = slots[i];
            }
        }
        firstBound = to;
        slots[to++] = lowSlot;
        if (highest != lowest) {
            slots[to] = highSlot;
        }
        next = 0;
    }

    int size() {
        return size;
    }

    /** The peer of the held writes; meaningful while {@link #size()} is not 0. */
    long peer() {
        return peer;
    }

    /** The token of the held writes; meaningful while {@link #size()} is not 0. */
    long token() {
        return token;
    }

    /** The slot of the {@code i}-th write: in the order added, or after {@link #seal(boolean)} in the order to post. */
    int slot(final int i) {
        return slots[i];
    }

    /** After {@link #seal(boolean)}: whether the {@code i}-th write is one that bounds the range, to post delivery-complete. */
    boolean deliveryComplete(final int i) {
        return i >= firstBound;
    }

    /** After {@link #seal(boolean)}: the index of the next write to post; {@link #size()} when all are posted. */
    int next() {
        return next;
    }

    /** The write at {@link #next()} was handed to the provider (or failed at once). */
    void advance() {
        next++;
    }

    /** Forgets the writes (their slots stay with the caller); the chain takes new ones. */
    void clear() {
        size = 0;
        next = 0;
        firstBound = -1;
    }
}
