package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.PeerUnreachableException;

import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.agrona.collections.Long2ObjectHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The shm endpoints open in this process, and which domains of the process inserted each into their AV.
 *
 * <p>libfabric's shm provider reaches a peer endpoint of its own process through that endpoint's own mapping,
 * which fi_close unmaps: a later post to it, or the clean-up of an AV that still holds it, touches freed memory and
 * kills the JVM (SIGSEGV, exit 134). So an endpoint's fi_close waits until no AV of the process holds it: closing
 * marks it {@linkplain Entry#gone gone}, each domain that inserted it refuses further operations to it and removes it
 * from its AV on its own thread (at its next poll, or when it closes), and the last one to let go closes it. A
 * closing endpoint first removes the peers it holds itself, so two endpoints that inserted each other never wait for
 * each other. Cross-process peers need none of this: their regions stay mapped in this process.
 *
 * <p>The other direction: an endpoint's first post to a peer comes with a connection request, which the peer reads
 * at its next progress. libfabric 2.1's shm then looks the poster's name up in the process's list of endpoint names,
 * and a closed endpoint stays in that list with the address of its unmapped region: a poster of this process that
 * closed before its peer read the request killed the JVM (SIGSEGV in {@code smr_ep_progress}, reading the region's
 * pid). Each entry counts its domain's completion reads ({@link Entry#progressed}, every read takes all that peers
 * queued), and a closing domain waits until every endpoint of this process it posted to has read twice since its
 * last post there, or has closed ({@link FabricPeers#localTargetsCaughtUp}); holding such an endpoint in its AV, it
 * lets go of it while it waits, so that the endpoint's close, whose last completion reads take what was queued, need
 * not wait for it.
 *
 * <p>Thread-safe; only control-path methods take the lock.
 */
final class FabricLocalEndpoints {

    private static final Map<String, Entry> OPEN = new HashMap<>();
    /**
     * Names of this process's endpoints that closed: libfabric 1.17's shm crashes inside fi_av_insert of one of
     * them (it finds the peer through the process's own, freed, endpoint), so such a peer is refused before the
     * insert. Peers in other processes need no such check: inserting one that is gone succeeds, and operations to
     * it end by the operation timeout. Grows by one short name per closed shm endpoint.
     */
    private static final Set<String> CLOSED = new HashSet<>();
    /** Bumped whenever an endpoint starts closing, so that domains look for gone peers only then. */
    private static final AtomicInteger CLOSINGS = new AtomicInteger();

    private FabricLocalEndpoints() {}

    /** An open (or closing) endpoint of this process. */
    static final class Entry {
        private final String key;
        private final FabricEndpoint endpoint;
        private int holders;
        private boolean closing;
        /** Set once the endpoint started closing: no new operation may reach it. */
        volatile boolean gone;
        /** Set once its fi_close returned: it reads nothing any more (its close's last reads done). */
        private volatile boolean closed;
        /** Completion reads of the endpoint's domain so far. */
        private final AtomicLong progressed = new AtomicLong();
        /** The thread that last read the endpoint's completions, or else opened it: the one that drives it. */
        private volatile Thread driver = Thread.currentThread();
        /** Reads the endpoint's completions once; set by its domain, run only on its driving thread. */
        private volatile @Nullable Runnable progress;

        private Entry(final String key, final FabricEndpoint endpoint) {
            this.key = key;
            this.endpoint = endpoint;
        }

        /** The completion reads of the endpoint's domain so far. Does not allocate. */
        long progressed() {
            return progressed.get();
        }

        /** The domain read the endpoint's completions once, on its driving thread. Does not allocate. */
        void progressedOnce() {
            progressed.incrementAndGet();
            final Thread current = Thread.currentThread();
            if (driver != current) {
                driver = current;
            }
        }

        void drivenBy(final Runnable readCompletions) {
            progress = readCompletions;
        }

        /**
         * Whether the endpoint read its completions twice since it had read {@code progressedAtPost} times (once
         * could be a read that began before the post), or it closed: the poster may close then. Not merely {@link
         * #gone}: the completion reads that take its held messages before its fi_close read what peers queued.
         */
        boolean caughtUp(final long progressedAtPost) {
            return closed || progressed.get() - progressedAtPost >= 2;
        }

        private void closeNow() {
            endpoint.closeNow();
            closed = true;
        }

        /**
         * Reads the endpoint's completions once where the calling thread drives it (waiting for that thread would
         * never end); else nothing.
         */
        void progressIfDrivenHere() {
            final Runnable read = progress;
            if (read != null && driver == Thread.currentThread()) {
                read.run();
            }
        }
    }

    /** Records {@code endpoint} as open, driven by the calling thread until another reads its completions. */
    static Entry opened(final FabricEndpoint endpoint) {
        synchronized (OPEN) {
            final String key = key(endpoint.name());
            final Entry entry = new Entry(key, endpoint);
            OPEN.put(key, entry);
            CLOSED.remove(key);
            return entry;
        }
    }

    /** The fi_av_insert of a peer, told whether the peer is an open endpoint of this process. */
    @FunctionalInterface
    interface Insert {
        /** Inserts the peer and returns its handle. */
        long insert(boolean inThisProcess);
    }

    /**
     * Runs {@code insert} for {@code name} and, when {@code name} is an endpoint of this process, records
     * {@code holder} as one of its holders, both under the lock, so that the endpoint cannot close in between.
     *
     * @return the handle {@code insert} returned
     * @throws PeerUnreachableException if {@code name} is an endpoint of this process that is closing or closed
     */
    static long insert(
            final NetworkAddress peer, final byte[] name, final Insert insert, final Long2ObjectHashMap<Entry> holder) {
        synchronized (OPEN) {
            final String key = key(name);
            final Entry entry = OPEN.get(key);
            if (entry != null ? entry.gone : CLOSED.contains(key)) {
                throw new PeerUnreachableException(peer, FabricPeers.CLOSED_HERE);
            }
            final long handle = insert.insert(entry != null);
            if (entry != null) {
                entry.holders++;
                holder.put(handle, entry);
            }
            return handle;
        }
    }

    /** The number of closings so far; a change means some held entries may have gone. */
    static int closings() {
        return CLOSINGS.get();
    }

    /**
     * The caller removed {@code entry} from its AV: drops its hold, and closes the endpoint if it was waiting for
     * that. Call on the holder's thread after its fi_av_remove.
     */
    static void release(final Entry entry) {
        final boolean last;
        synchronized (OPEN) {
            entry.holders--;
            last = entry.closing && entry.holders == 0;
            if (last) {
                OPEN.remove(entry.key);
                CLOSED.add(entry.key);
            }
        }
        if (last) {
            entry.closeNow();
        }
    }

    /**
     * {@code endpoint} is closing (its own held peers already released): closes it now if no AV of the process
     * holds it, else marks it gone and leaves the close to the last holder.
     */
    static void close(final FabricEndpoint endpoint) {
        final boolean now;
        final Entry entry;
        synchronized (OPEN) {
            entry = OPEN.get(key(endpoint.name()));
            if (entry == null) {
                now = true;
                CLOSED.add(key(endpoint.name()));
            } else {
                entry.gone = true;
                entry.closing = true;
                now = entry.holders == 0;
                if (now) {
                    OPEN.remove(entry.key);
                    CLOSED.add(entry.key);
                }
                CLOSINGS.incrementAndGet();
            }
        }
        if (entry != null && now) {
            entry.closeNow();
        } else if (now) {
            endpoint.closeNow();
        }
    }

    /** Whether an AV of this process holds {@code endpoint} (see {@link #replaceUnlessHeld}). */
    static boolean heldHere(final FabricEndpoint endpoint) {
        synchronized (OPEN) {
            final Entry entry = OPEN.get(key(endpoint.name()));
            return entry != null && entry.holders > 0;
        }
    }

    /**
     * Runs {@code replace} for {@code endpoint} unless an AV of this process holds it (such a holder reaches it
     * through the endpoint's own mapping, which the replacement unmaps), under the lock, so that no holder comes in
     * between.
     *
     * @return whether it ran
     */
    static boolean replaceUnlessHeld(final FabricEndpoint endpoint, final Runnable replace) {
        synchronized (OPEN) {
            final Entry entry = OPEN.get(key(endpoint.name()));
            if (entry != null && entry.holders > 0) {
                return false;
            }
            replace.run();
            return true;
        }
    }

    private static String key(final byte[] name) {
        return HexFormat.of().formatHex(name);
    }
}
