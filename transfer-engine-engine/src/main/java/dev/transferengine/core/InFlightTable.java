package dev.transferengine.core;

import org.agrona.collections.IntArrayList;
import org.jspecify.annotations.Nullable;

/**
 * The operations a group has in flight, one slot each. An operation's token is its slot and the slot's
 * generation, so a completion that arrives after its operation ended (timed out, failed, restarted) finds another
 * generation and is recognised as stale. Also remembers, per slot, the deadline and the NICs a piece was posted on,
 * so a timeout can withdraw the pieces. Worker thread only.
 */
final class InFlightTable {

    /** The token bit of a send; a write's token has it clear. Generations take 30 bits, so bit 62 is free. */
    private static final long SEND = 1L << 62;

    private final @Nullable Submission[] slots;
    private final int[] generations;
    private final long[] deadlines;
    /** Bit per NIC that holds a piece of the slot's operation. */
    private final int[] postedNics;
    /** A stack, so the lowest slots are reused and the timeout scan stays short. */
    private final IntArrayList free;

    private int active;
    private int highWater;

    InFlightTable(final int capacity) {
        this.slots = new Submission[capacity];
        this.generations = new int[capacity];
        this.deadlines = new long[capacity];
        this.postedNics = new int[capacity];
        this.free = new IntArrayList(capacity, IntArrayList.DEFAULT_NULL_VALUE);
        for (int i = capacity - 1; i >= 0; i--) {
            free.pushInt(i);
        }
    }

    boolean hasRoom() {
        return !free.isEmpty();
    }

    int active() {
        return active;
    }

    /** Takes a slot for {@code s}, due by {@code deadlineNanos}; sets and returns its token. Needs {@link #hasRoom()}. */
    long add(final Submission s, final long deadlineNanos) {
        final int slot = free.popInt();
        highWater = Math.max(highWater, slot + 1);
        final int generation = ++generations[slot] & 0x3FFF_FFFF;
        slots[slot] = s;
        deadlines[slot] = deadlineNanos;
        postedNics[slot] = 0;
        active++;
        s.token = (long) generation << 32 | slot | (s.isSend() ? SEND : 0);
        return s.token;
    }

    /** Whether {@code token} is a send's rather than a write's; stale tokens too. */
    static boolean isSend(final long token) {
        return (token & SEND) != 0;
    }

    /** The live operation with {@code token}, or null when it ended already (a stale completion). */
    @Nullable Submission get(final long token) {
        final int slot = (int) token;
        if (slot < 0 || slot >= slots.length) {
            return null;
        }
        final Submission s = slots[slot];
        return s != null && s.token == token ? s : null;
    }

    /** A piece of the live operation {@code token} was posted on {@code nic}. */
    void posted(final long token, final int nic) {
        postedNics[(int) token] |= 1 << nic;
    }

    /** The NICs (bit per NIC) holding a piece of the live operation {@code token}. */
    int postedNics(final long token) {
        return postedNics[(int) token];
    }

    /** Frees the slot of the live operation {@code token}. */
    void remove(final long token) {
        final int slot = (int) token;
        slots[slot] = null;
        active--;
        free.pushInt(slot);
    }

    /** The first live operation at or after {@code fromSlot} past its deadline at {@code now}, or null. */
    @Nullable Submission nextExpired(final int fromSlot, final long now) {
        for (int slot = fromSlot; slot < highWater; slot++) {
            final Submission s = slots[slot];
            if (s != null && now - deadlines[slot] > 0) {
                return s;
            }
        }
        return null;
    }

    /** The tokens of the live operations, for a drain that waits until they ended; allocates (rare). */
    long[] liveTokens() {
        final long[] tokens = new long[active];
        int n = 0;
        for (int slot = 0; slot < highWater && n < tokens.length; slot++) {
            final Submission s = slots[slot];
            if (s != null) {
                tokens[n++] = s.token;
            }
        }
        return tokens;
    }

    /** Any live operation at or after {@code fromSlot}, or null: for failing everything at close or restart. */
    @Nullable Submission nextLive(final int fromSlot) {
        for (int slot = fromSlot; slot < highWater; slot++) {
            if (slots[slot] != null) {
                return slots[slot];
            }
        }
        return null;
    }
}
