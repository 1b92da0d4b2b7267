package dev.transferengine.transport.fabric;

import dev.transferengine.exceptions.TransferEngineException;

import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * Writes to one peer and one remote key that a {@link FabricDomain} holds back and posts in one run, so that it can
 * post all but one or two of them transmit-complete: the consecutive writes of one request, or, where every write is
 * an inject and the peer checks every access before posting ({@code spannable}), the writes of several requests. While
 * writes are added it keeps their remote ranges; {@link #seal(boolean)} moves the one starting lowest and the one ending
 * highest (one when they coincide) to the end, as the writes to post delivery-complete, or, where every write's range
 * is checked before it is posted, keeps the order and marks the last write alone; the chain is then posted strictly in
 * that order from {@link #next()} on, however often the provider turns a post away. The domain's class comment gives
 * the argument.
 *
 * <p>After the seal the chain also holds the completions of its writes posted as injects, as runs of one token each
 * ({@link #hold}), until every delivery-complete write of it ended ({@link #confirmationEnded}): the domain then
 * reports the runs done, or failed with what failed a delivery-complete write, and takes the chain back once it is
 * also handed over whole ({@link #settled()}).
 *
 * <p>Single-threaded (the domain's worker). Allocation-free once its arrays have grown to the longest chain.
 */
final class FabricWriteChain {

    /** The most writes a chain holds: a longer request is posted in chains of this many. */
    static final int LIMIT = 1024;

    private int[] slots = new int[64];
    private long[] tokens = new long[64];
    private long[] starts = new long[64];
    private long[] ends = new long[64];
    private int size;
    private long peer;
    private long rkey;
    /** Whether every write added may share the chain with other requests' (see {@link #accepts}). */
    private boolean spannable;
    /** Whether writes of more than one request were added. */
    private boolean severalRequests;
    /** After {@link #seal(boolean)}: the index of the first write to post delivery-complete; -1 before. */
    private int firstBound = -1;

    private int next;
    /** Whether every write was handed to the provider or given up ({@link #handedOver()}). */
    private boolean handedOver;

    /** Delivery-complete writes sealed and not ended yet. */
    private int confirmations;

    private @Nullable TransferEngineException confirmationFailure;
    private long[] runTokens = new long[8];
    private long[] runBytes = new long[8];
    private int[] runPieces = new int[8];
    private int runs;

    /**
     * Whether a write of {@code writeToken} to {@code writePeer}'s {@code writeKey} may join this chain: the chain is
     * empty, or it is open, has room, goes to the same peer and key, and the write is of the request added last (and
     * inject-sized where the chain holds several requests) or both it and every write held are {@code
     * writeSpannable}.
     */
    boolean accepts(final long writeToken, final long writePeer, final long writeKey, final boolean writeSpannable) {
        if (size == 0) {
            return true;
        }
        if (firstBound >= 0 || size >= LIMIT || peer != writePeer || rkey != writeKey) {
            return false;
        }
        return (writeToken == tokens[size - 1] && (!severalRequests || writeSpannable))
                || (spannable && writeSpannable);
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
            final long length,
            final boolean writeSpannable) {
        if (size == 0) {
            peer = writePeer;
            rkey = writeKey;
            spannable = writeSpannable;
            severalRequests = false;
        } else {
            if (size == slots.length) {
                final int grown = Math.min(LIMIT, size * 2);
                slots = Arrays.copyOf(slots, grown);
                tokens = Arrays.copyOf(tokens, grown);
                starts = Arrays.copyOf(starts, grown);
                ends = Arrays.copyOf(ends, grown);
            }
            spannable &= writeSpannable;
            severalRequests |= writeToken != tokens[size - 1];
        }
        slots[size] = slot;
        tokens[size] = writeToken;
        starts[size] = start;
        ends[size] = start + length;
        size++;
    }

    /**
     * Ends the chain: the other writes keep the order they were added in, then come the one that starts lowest and
     * the one that ends highest in the remote region (the first added of each where several tie). With
     * {@code rangesChecked} (the target's keys, bounds and access were checked for every write before posting, see
     * {@link FabricShmKeys}) nothing moves and only the last write added is to post delivery-complete: it is there for
     * the order alone. Posting starts at the first write.
     */
    void seal(final boolean rangesChecked) {
        int lowest = size - 1;
        int highest = size - 1;
        if (!rangesChecked) {
            lowest = 0;
            highest = 0;
            for (int i = 1; i < size; i++) {
                if (Long.compareUnsigned(starts[i], starts[lowest]) < 0) {
                    lowest = i;
                }
                if (Long.compareUnsigned(ends[i], ends[highest]) > 0) {
                    highest = i;
                }
            }
        }
        final int lowSlot = slots[lowest];
        final long lowToken = tokens[lowest];
        final long lowStart = starts[lowest];
        final long lowEnd = ends[lowest];
        final int highSlot = slots[highest];
        final long highToken = tokens[highest];
        final long highStart = starts[highest];
        final long highEnd = ends[highest];
        int to = 0;
        for (int i = 0; i < size; i++) {
            if (i != lowest && i != highest) {
                move(i, to++);
            }
        }
        firstBound = to;
        put(to++, lowSlot, lowToken, lowStart, lowEnd);
        if (highest != lowest) {
            put(to, highSlot, highToken, highStart, highEnd);
        }
        next = 0;
        confirmations = size - firstBound;
    }

    private void move(final int from, final int to) {
        put(to, slots[from], tokens[from], starts[from], ends[from]);
    }

    private void put(final int i, final int slot, final long token, final long start, final long end) {
        slots[i] = slot;
        tokens[i] = token;
        starts[i] = start;
        ends[i] = end;
    }

    int size() {
        return size;
    }

    /** The peer of the held writes; meaningful while {@link #size()} is not 0. */
    long peer() {
        return peer;
    }

    /** The slot of the {@code i}-th write: in the order added, or after {@link #seal(boolean)} in the order to post. */
    int slot(final int i) {
        return slots[i];
    }

    /** The token of the {@code i}-th write, in the order of {@link #slot}. */
    long token(final int i) {
        return tokens[i];
    }

    /** After {@link #seal(boolean)}: whether the {@code i}-th write is one that bounds the range, to post delivery-complete. */
    boolean deliveryComplete(final int i) {
        return firstBound >= 0 && i >= firstBound;
    }

    /**
     * Whether withdrawing {@code token} takes the {@code i}-th write out: one of {@code token}'s not posted yet, unless
     * it is a delivery-complete write of a chain that holds other requests' writes too, which it still confirms.
     */
    boolean withdrawable(final int i, final long token) {
        return tokens[i] == token && i >= next && (!severalRequests || !deliveryComplete(i));
    }

    /**
     * Takes the {@link #withdrawable} writes of {@code token} out (the caller released their slots and ended their
     * confirmations); the order of the others is kept.
     */
    void withdraw(final long token) {
        int to = next;
        int bound = firstBound;
        for (int i = next; i < size; i++) {
            if (withdrawable(i, token)) {
                if (firstBound >= 0 && i < firstBound) {
                    bound--;
                }
            } else {
                move(i, to++);
            }
        }
        size = to;
        firstBound = firstBound >= 0 ? bound : -1;
    }

    /** Forgets the held runs of {@code token}, which was withdrawn: nothing more of it is reported. */
    void dropRuns(final long token) {
        int kept = 0;
        for (int r = 0; r < runs; r++) {
            if (runTokens[r] != token) {
                runTokens[kept] = runTokens[r];
                runBytes[kept] = runBytes[r];
                runPieces[kept++] = runPieces[r];
            }
        }
        runs = kept;
    }

    /** After {@link #seal(boolean)}: the index of the next write to post; {@link #size()} when all are posted. */
    int next() {
        return next;
    }

    /** The write at {@link #next()} was handed to the provider (or failed at once). */
    void advance() {
        next++;
    }

    /** A write of {@code token} of {@code bytes} completed when its post returned: held until the chain's confirmations end. */
    void hold(final long token, final long bytes) {
        if (runs > 0 && runTokens[runs - 1] == token) {
            runBytes[runs - 1] += bytes;
            runPieces[runs - 1]++;
            return;
        }
        if (runs == runTokens.length) {
            runTokens = Arrays.copyOf(runTokens, runs * 2);
            runBytes = Arrays.copyOf(runBytes, runs * 2);
            runPieces = Arrays.copyOf(runPieces, runs * 2);
        }
        runTokens[runs] = token;
        runBytes[runs] = bytes;
        runPieces[runs++] = 1;
    }

    /** Held runs: each the completions of one token's consecutive injected writes. */
    int runs() {
        return runs;
    }

    long runToken(final int run) {
        return runTokens[run];
    }

    long runBytes(final int run) {
        return runBytes[run];
    }

    int runPieces(final int run) {
        return runPieces[run];
    }

    /**
     * One delivery-complete write of the chain ended, with {@code failure} or (null) placed; true when it was the
     * last one outstanding, so that the runs are to be reported now.
     */
    boolean confirmationEnded(final @Nullable TransferEngineException failure) {
        if (failure != null && confirmationFailure == null) {
            confirmationFailure = failure;
        }
        return --confirmations == 0;
    }

    /** What failed a delivery-complete write of the chain; null while none failed. */
    @Nullable TransferEngineException confirmationFailure() {
        return confirmationFailure;
    }

    /** Every write was handed to the provider, or the rest given up: the chain is posted no further. */
    void handedOver() {
        handedOver = true;
    }

    /** Whether the chain is handed over and its confirmations ended (its runs reported then): it may be cleared. */
    boolean settled() {
        return handedOver && confirmations == 0;
    }

    /** The runs were reported (or failed). */
    void runsReported() {
        runs = 0;
    }

    /** Forgets the writes (their slots stay with the caller) and the runs; the chain takes new ones. */
    void clear() {
        size = 0;
        next = 0;
        firstBound = -1;
        handedOver = false;
        confirmations = 0;
        confirmationFailure = null;
        runs = 0;
    }
}
