package dev.transferengine.transport.fabric;

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.agrona.collections.Int2IntHashMap;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The sizes receive pools were asked for, on both ends of tagged messages, so that the size asked for is the largest
 * message a pool takes on libfabric too (docs/delivery-contract.md). Tag matching cannot say "at most n" for every
 * n, so the sender decides: a receive buffer of {@code n} bytes (exactly the size asked for) is posted with the ignore
 * bits of its size class {@code c = ceil(log2 n)} ({@link FabricOps#sizeTag}), so it takes every send tagged with a
 * class up to {@code c}; each receiver tells its peers, per class, the smallest and the largest size asked for
 * ({@link FabricControl}: asked for at a peer's first send, pushed again when a pool widens a class); the sender
 * tags a send of {@code L} bytes with the smallest class whose smallest pool takes {@code L} (every buffer of that
 * class and above then fits it), and refuses at once a send that no pool of the peer takes. A closed pool's size
 * stops being advertised once no buffer of that size is left (the pool's buffers were withdrawn): its peers are told
 * the narrowed sizes, so a send only it took is refused at the sender instead of waiting at the receiver for a
 * buffer. Each message carries the receiver's version of its sizes, and a sender keeps the newest, so messages that
 * arrive out of order cannot widen what a later one narrowed (a message without a version, from an engine before
 * this, is merged by min and max as before).
 *
 * <p>A send to a peer that has no pool yet waits at the sender until the peer advertises one (it is asked again
 * every 512 ms meanwhile, in case its push was lost), then goes or is refused by the sizes that came.
 *
 * <p>Limits, conservative: a send longer than the smallest pool of its class and shorter than the largest, with no
 * larger class, is refused though the larger pool would take it; a send racing with a pool being added is refused
 * until the receiver's push arrives; a pool smaller than the others of its class that the sender has not heard of
 * yet may receive a send that does not fit, which its provider truncates and the receiver drops (never delivered;
 * the sender may have seen it done). A peer that does not answer (an older engine) is sent to by message length, as
 * before. Single-threaded (the domain's worker).
 */
final class FabricPoolSizes {

    /** Size classes: {@code ceil(log2 n)} of a pool of up to 2^31 - 1 bytes. */
    static final int CLASSES = 32;
    /** What {@link #tag} answers for a send no pool of the peer takes. */
    static final long REFUSED = -1;
    /**
     * What {@link #tag} answers for a send to a peer that answered with no pool yet: it waits at the sender until the
     * peer advertises one, since a send the provider queued at the peer would take the first buffer posted there,
     * however small (and be truncated).
     */
    static final long NO_POOL_YET = -2;
    /**
     * Peers told of later changes at most: anyone who reaches the endpoint can ask in any address's name, so the set is
     * bounded; an asker beyond it is answered once and asks again when a send of its is refused.
     */
    static final int MAX_SUBSCRIBERS = 1024;

    private static final SecureRandom RANDOM = new SecureRandom();

    private final int[] localMin = new int[CLASSES];
    private final int[] localMax = new int[CLASSES];
    /** The size of each receive buffer posted here and not withdrawn, by its token. */
    private final Long2LongHashMap bufferSizes = new Long2LongHashMap(0);
    /** How many buffers of each size {@link #bufferSizes} holds. */
    private final Int2IntHashMap buffersOfSize = new Int2IntHashMap(0);
    /** This domain's sizes' version: one more at each change, so peers keep the newest. */
    private long version;
    /**
     * Peers that asked for this domain's sizes, with the nonce of their latest question: they are told (echoing it)
     * when a pool widens a class.
     */
    private final Long2LongHashMap subscribers = new Long2LongHashMap(0);

    private final Long2ObjectHashMap<View> views = new Long2ObjectHashMap<>();
    /** Views not settled yet, or waiting for a first pool: while none is, the worker's poll skips them. */
    private int asking;

    /** A send waiting for its peer's sizes. */
    record Held(long token, MemorySegment message) {}

    /** What this domain knows of one peer's pools. */
    static final class View {
        final int[] min = new int[CLASSES];
        final int[] max = new int[CLASSES];
        /** The sizes came (or the peer never answered: {@link #byLength}). */
        boolean settled;
        /** The peer never answered: its sends are tagged by their length, as before it was asked. */
        boolean byLength;
        /** The peer has no pool yet and sends wait for one: it is asked again until it advertises one. */
        boolean awaitingPool;
        /** The version of the sizes this view holds; -1 before any came with one. */
        long version = -1;
        /** Sent with each question to the peer; only answers that echo it are taken (a forgery cannot know it). */
        final long nonce = RANDOM.nextLong();

        int attempts;
        long dueAt;
        final ArrayDeque<Held> held = new ArrayDeque<>();
    }

    /** The size class of {@code bytes}: {@code ceil(log2 bytes)}, 0 for 1. */
    static int sizeClass(final long bytes) {
        return bytes <= 1 ? 0 : 64 - Long.numberOfLeadingZeros(bytes - 1);
    }

    /**
     * Receive buffer {@code token} of {@code bytes} is posted here (again, after a message); answers whether it widened
     * a class (peers are told then).
     */
    boolean posted(final long token, final long bytes) {
        final int size = (int) Math.min(bytes, Integer.MAX_VALUE);
        if (bufferSizes.containsKey(token)) {
            return false;
        }
        bufferSizes.put(token, size);
        buffersOfSize.put(size, buffersOfSize.get(size) + 1);
        final int c = sizeClass(size);
        boolean widened = false;
        if (localMin[c] == 0 || size < localMin[c]) {
            localMin[c] = size;
            widened = true;
        }
        if (size > localMax[c]) {
            localMax[c] = size;
            widened = true;
        }
        if (widened) {
            version++;
        }
        return widened;
    }

    /**
     * Receive buffer {@code token} was withdrawn (its pool closed); answers whether that narrowed a class: it was the
     * last buffer of its size (peers are told then).
     */
    boolean withdrawn(final long token) {
        if (!bufferSizes.containsKey(token)) {
            return false;
        }
        final int size = (int) bufferSizes.remove(token);
        final int left = buffersOfSize.get(size) - 1;
        if (left > 0) {
            buffersOfSize.put(size, left);
            return false;
        }
        buffersOfSize.remove(size);
        final int c = sizeClass(size);
        localMin[c] = 0;
        localMax[c] = 0;
        final Int2IntHashMap.KeyIterator sizes = buffersOfSize.keySet().iterator();
        while (sizes.hasNext()) {
            final int other = sizes.nextValue();
            if (sizeClass(other) == c) {
                localMin[c] = localMin[c] == 0 ? other : Math.min(localMin[c], other);
                localMax[c] = Math.max(localMax[c], other);
            }
        }
        version++;
        return true;
    }

    /** The version of {@link #advertised}: peers keep the sizes of the highest they got. */
    long version() {
        return version;
    }

    /** This domain's sizes as sent to peers: per class in use its smallest and its largest. */
    int[] advertised() {
        final List<Integer> out = new ArrayList<>();
        for (int c = 0; c < CLASSES; c++) {
            if (localMin[c] != 0) {
                out.add(localMin[c]);
                out.add(localMax[c]);
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * Peer {@code peer} asked for the sizes with {@code nonce}: it is told of later changes too. Answers false (it is
     * not told) when {@value #MAX_SUBSCRIBERS} other peers are subscribed already.
     */
    boolean subscribe(final long peer, final long nonce) {
        if (!subscribers.containsKey(peer) && subscribers.size() >= MAX_SUBSCRIBERS) {
            return false;
        }
        subscribers.put(peer, nonce);
        return true;
    }

    /** The subscribed peers and the nonce each asked with. */
    Long2LongHashMap subscribers() {
        return subscribers;
    }

    /** What is known of {@code peer}'s pools; null before its first send. */
    @Nullable View view(final long peer) {
        return views.get(peer);
    }

    /** Starts asking {@code peer} for its sizes. */
    View ask(final long peer) {
        final View view = new View();
        views.put(peer, view);
        asking++;
        return view;
    }

    /**
     * Takes sizes that came from {@code peer}, of {@code sizesVersion} (-1 from an engine that sends none: merged by
     * min and max); answers its view, now settled. Sizes older than those the view holds are ignored.
     */
    View learn(final long peer, final int[] sizes, final long sizesVersion) {
        View view = views.get(peer);
        if (view == null) {
            view = ask(peer);
        }
        if (sizesVersion >= 0) {
            if (sizesVersion <= view.version) {
                settle(view, false);
                return view;
            }
            view.version = sizesVersion;
            Arrays.fill(view.min, 0);
            Arrays.fill(view.max, 0);
        }
        for (final int size : sizes) {
            if (size < 1) {
                continue;
            }
            final int c = sizeClass(size);
            view.min[c] = view.min[c] == 0 ? size : Math.min(view.min[c], size);
            view.max[c] = Math.max(view.max[c], size);
        }
        settle(view, false);
        if (largest(view) > 0) {
            stopAwaitingPool(view);
        }
        return view;
    }

    /** A send to {@code view}'s peer waits for a first pool there: the peer is asked again until it has one. */
    void awaitPool(final View view) {
        if (!view.awaitingPool) {
            view.awaitingPool = true;
            asking++;
        }
    }

    /** {@code view}'s peer advertised a pool, or no send waits for one any more. */
    void stopAwaitingPool(final View view) {
        if (view.awaitingPool) {
            view.awaitingPool = false;
            asking--;
        }
    }

    /** {@code view} is settled: by the sizes that came, or {@code byLength} where its peer never answered. */
    void settle(final View view, final boolean byLength) {
        if (!view.settled) {
            view.settled = true;
            asking--;
        }
        view.byLength = byLength;
    }

    /** Whether any peer's sizes are still asked for, or a first pool there. */
    boolean asking() {
        return asking > 0;
    }

    /** Every view, to post overdue questions again and to fail held sends. */
    Long2ObjectHashMap<View> views() {
        return views;
    }

    /**
     * The tag of a send of {@code length} bytes to a settled peer: the smallest class whose smallest pool takes it;
     * by its length where the peer never answered; {@link #NO_POOL_YET} where it has no pool yet; {@link #REFUSED}
     * where no pool of the peer takes it.
     */
    static long tag(final View view, final long length) {
        if (view.byLength) {
            return FabricOps.sizeTag(length);
        }
        for (int c = sizeClass(length); c < CLASSES; c++) {
            if (view.min[c] >= length) {
                return FabricOps.sizeTag(1L << c);
            }
        }
        return largest(view) == 0 ? NO_POOL_YET : REFUSED;
    }

    /** Why {@code view}'s peer takes no send of {@code length} bytes, naming both sizes. */
    static String refusal(final View view, final long length, final Object peer) {
        final int largest = largest(view);
        if (largest < length) {
            return "a send of " + length + " bytes is longer than any receive pool of " + peer
                    + " takes: the largest was asked for " + largest + " bytes";
        }
        final int c = sizeClass(length);
        return "a send of " + length + " bytes fits only the receive pool of " + view.max[c] + " bytes at " + peer
                + ", which shares its size class with one of " + view.min[c]
                + " bytes that libfabric's tag matching cannot keep it out of; refused rather than truncated";
    }

    private static int largest(final View view) {
        int largest = 0;
        for (final int size : view.max) {
            largest = Math.max(largest, size);
        }
        return largest;
    }
}
