package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.PeerState;
import dev.transferengine.exceptions.MalformedDescriptorException;
import dev.transferengine.exceptions.PeerUnreachableException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongHashSet;
import org.agrona.collections.Object2LongHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The peers one endpoint knows: each address is inserted into the AV once (fi_av_insert) and its fi_addr_t is the
 * handle the engine gets back. Keeps a snapshot for {@link #snapshot()} that other threads read.
 * Resolution runs on the worker; lookups by handle do not allocate.
 *
 * <p>A peer can be {@linkplain #reset reset}: removed from the AV and inserted again, which on the RxM providers
 * closes its connection and drops what the provider still queued for it. The engine's handle stays the same; the
 * peer's new fi_addr_t ({@link #fiAddr}) and a bumped {@linkplain #epoch epoch} tell posts made before the reset
 * from those made after. A handle is an fi_addr_t the peer had; where a newly inserted peer gets an fi_addr_t that
 * is already some reset peer's handle, it gets a handle of its own above every fi_addr_t.
 */
final class FabricPeers {

    private static final Logger LOG = LoggerFactory.getLogger(FabricPeers.class);
    /** Why operations to a peer endpoint of this process that closed fail. */
    static final String CLOSED_HERE = "its endpoint in this process is closed";
    /** libfabric's FI_ADDR_NOTAVAIL: the {@link #fiAddr} of a peer whose reset failed; posts to it fail. */
    static final long FI_ADDR_NOTAVAIL = -1L;

    private final FabricEndpoint endpoint;
    private final int group;
    private final int nic;
    private final MemorySegment fiAddr;
    private final Arena arena;
    private final Object2LongHashMap<NetworkAddress> handles = new Object2LongHashMap<>(-1);
    private final Long2ObjectHashMap<NetworkAddress> addresses = new Long2ObjectHashMap<>();
    private final Long2ObjectHashMap<String> failures = new Long2ObjectHashMap<>();
    /** Peers that are shm endpoints of this process, by handle; their closing is tracked. */
    private final Long2ObjectHashMap<FabricLocalEndpoints.Entry> localPeers = new Long2ObjectHashMap<>();
    /** The keys each shm peer publishes ({@link FabricShmKeys}), by handle; peers that publish none are absent. */
    private final Long2ObjectHashMap<FabricShmKeys.View> keys = new Long2ObjectHashMap<>();
    /**
     * The {@linkplain FabricShmKeys.View#replacements replacement count} each shm peer's table showed when it was
     * inserted into the AV (or last inserted again): a higher count means the peer replaced its endpoint since.
     */
    private final Long2LongHashMap replacementsSeen = new Long2LongHashMap(-1);
    /** The replacement count of each shm peer that {@link #renew} saw raised and waits with, by handle. */
    private final Long2LongHashMap renewalSighted = new Long2LongHashMap(Long.MIN_VALUE);
    /** The completion reads made before {@link #renewalSighted}'s count was seen, by handle. */
    private final Long2LongHashMap renewalSightedAt = new Long2LongHashMap(-1);
    /**
     * The {@linkplain FabricLocalEndpoints.Entry#progressed completion reads} each of {@link #localPeers} had made
     * when this endpoint last posted to it, by handle (at most one per such peer); looked at when this endpoint
     * closes ({@link #localTargetsCaughtUp}).
     */
    private final Long2LongHashMap postedAt = new Long2LongHashMap(-1);
    /** Handles of {@link #localPeers} already removed from the AV. */
    private final LongHashSet released = new LongHashSet();

    /** The fi_addr_t and epoch of each peer whose fi_addr_t is not its handle or that was reset. */
    private final Long2ObjectHashMap<Entry> moved = new Long2ObjectHashMap<>();
    /** The next handle of a peer whose fi_addr_t is taken as a handle already. */
    private long nextOwnHandle = 1L << 62;

    private int seenClosings = FabricLocalEndpoints.closings();
    private volatile List<PeerInfo> snapshot = List.of();

    FabricPeers(final FabricEndpoint endpoint, final Arena arena, final int group, final int nic) {
        this.endpoint = endpoint;
        this.arena = arena;
        this.group = group;
        this.nic = nic;
        this.fiAddr = arena.allocate(JAVA_LONG);
    }

    /**
     * The handle (fi_addr_t) for {@code peer}, inserting it into the AV the first time.
     *
     * @throws MalformedDescriptorException if the address is not one of this provider's, or the AV refuses it
     * @throws PeerUnreachableException     if an shm peer is an endpoint of this process that closed
     */
    long resolve(final NetworkAddress peer) {
        final long known = handles.getValue(peer);
        if (known != -1) {
            return known;
        }
        final byte[] name = FabricAddress.endpointName(peer, endpoint.provider());
        if (!endpoint.isShm()) {
            return insert(peer, name);
        }
        // No probing of /dev/shm: region names differ across versions (on 1.20 a probe declared live peers gone).
        // A peer of this process that closed is refused by FabricLocalEndpoints before the insert (1.17 would
        // crash in it); inserting a peer of another process that is gone succeeds (1.17 and 2.1), and operations
        // to it are turned away with -FI_EAGAIN and end by the operation timeout.
        return FabricLocalEndpoints.insert(peer, name, inThisProcess -> insert(peer, name), localPeers);
    }

    /** The handle of {@code peer} where it is in the AV already, else -1 (nothing is inserted). */
    long handle(final NetworkAddress peer) {
        return handles.getValue(peer);
    }

    private long insert(final NetworkAddress peer, final byte[] name) {
        final MemorySegment bytes = arena.allocate(name.length);
        MemorySegment.copy(name, 0, bytes, JAVA_BYTE, 0, name.length);
        final int inserted = endpoint.avInsert(bytes, fiAddr);
        if (inserted != 1) {
            throw new MalformedDescriptorException("fi_av_insert refused fabric address " + peer + " on provider "
                    + endpoint.provider() + ": "
                    + (inserted < 0 ? endpoint.library().describe(inserted) : "inserted " + inserted));
        }
        final long at = fiAddr.get(JAVA_LONG, 0);
        final long handle = addresses.containsKey(at) ? nextOwnHandle++ : at;
        if (handle != at) {
            moved.put(handle, new Entry(at));
        }
        handles.put(peer, handle);
        addresses.put(handle, peer);
        if (endpoint.isShm()) {
            final FabricShmKeys.View published = FabricShmKeys.open(name, peer, arena);
            if (published != null) {
                keys.put(handle, published);
                replacementsSeen.put(handle, published.replacements());
            }
        }
        publish();
        return handle;
    }

    /** The keys the shm peer {@code handle} publishes, or null (not shm, or it publishes none). Does not allocate. */
    FabricShmKeys.@Nullable View keys(final long handle) {
        return keys.isEmpty() ? null : keys.get(handle);
    }

    /**
     * Whether the shm peer {@code handle} replaced its endpoint under the same name since this AV inserted it
     * ({@link FabricShmKeys#replacing}): posts must wait for {@link #renew}. Does not allocate.
     */
    boolean replacedSinceInsert(final long handle) {
        if (keys.isEmpty()) {
            return false;
        }
        final FabricShmKeys.View published = keys.get(handle);
        return published != null && published.replacements() != replacementsSeen.get(handle);
    }

    /**
     * Makes the shm peer {@code handle}, which replaced its endpoint, reachable at its new one; call only while
     * nothing posted to it is outstanding (the provider still reaches the old endpoint's memory for those). 2.1's shm
     * looks up the peer region of each command it takes by the sender's map entry, and a removal from the AV empties
     * that entry (SIGSEGV in {@code smr_copy_from_sar} on a command queued before it). So it waits for one completion
     * read ({@code cqReads}, which takes what is queued here) after the raised count showed: by then every command
     * the old endpoint queued here is taken, since it queued them before it raised the count. Then, where this
     * process maps the peer's current region already, the new endpoint's connection request was taken and mapped
     * it (its commands may be queued here): only the count is noted. Else the peer is removed from the AV and
     * inserted again ({@link #reset}), so that the next post maps the new endpoint. Control path.
     *
     * @return whether posts to it may go on; false while it waits for a completion read
     */
    boolean renew(final long handle, final long cqReads) {
        final FabricShmKeys.View published = keys.get(handle);
        final long replacements = published == null ? -1 : published.replacements();
        if (renewalSighted.get(handle) != replacements) {
            renewalSighted.put(handle, replacements);
            renewalSightedAt.put(handle, cqReads);
            return false;
        }
        if (renewalSightedAt.get(handle) == cqReads) {
            return false;
        }
        renewalSighted.remove(handle);
        renewalSightedAt.remove(handle);
        replacementsSeen.put(handle, replacements);
        final byte[] name = FabricAddress.endpointName(addresses.get(handle), endpoint.provider());
        if (!FabricShmRegion.mappedHere(name)) {
            reset(handle);
        }
        return true;
    }

    /**
     * Whether {@code handle} is an endpoint of this process that closed: nothing may be posted to it any more
     * (see {@link FabricLocalEndpoints}). Does not allocate.
     */
    boolean isClosedHere(final long handle) {
        if (localPeers.isEmpty()) {
            return false;
        }
        final FabricLocalEndpoints.Entry local = localPeers.get(handle);
        return local != null && local.gone;
    }

    /**
     * Notes a post to {@code handle}, for {@link #localTargetsCaughtUp}. Does not allocate (once a peer of this
     * process was posted to, until it caught up).
     */
    void posting(final long handle) {
        if (localPeers.isEmpty()) {
            return;
        }
        final FabricLocalEndpoints.Entry local = localPeers.get(handle);
        if (local != null) {
            postedAt.put(handle, local.progressed());
        }
    }

    /**
     * Whether every endpoint of this process that this one posted to has read what it posted (its completions twice
     * since the last post) or has closed, so that this endpoint may close: 2.1's shm reads a poster's first command
     * through the poster's region ({@link FabricLocalEndpoints}). Reads the completions of those the calling thread
     * drives itself, once each. Control path (closing).
     */
    boolean localTargetsCaughtUp() {
        if (postedAt.isEmpty()) {
            return true;
        }
        final Long2LongHashMap.EntryIterator posted = postedAt.entrySet().iterator();
        while (posted.hasNext()) {
            posted.next();
            final FabricLocalEndpoints.Entry local = localPeers.get(posted.getLongKey());
            if (local != null && !local.caughtUp(posted.getLongValue())) {
                local.progressIfDrivenHere();
            }
            if (local == null || local.caughtUp(posted.getLongValue())) {
                posted.remove();
            }
        }
        return postedAt.isEmpty();
    }

    /**
     * Removes the peers of this process that closed since the last call from the AV and lets go of them, so that
     * their endpoints can close; they stay listed as unreachable. Cheap unless an endpoint closed meanwhile.
     */
    void releaseClosed() {
        final int closings = FabricLocalEndpoints.closings();
        if (closings == seenClosings || localPeers.isEmpty()) {
            return;
        }
        seenClosings = closings;
        releaseLocal(false);
    }

    /** Removes every peer of this process from the AV and lets go of it: this endpoint is about to close. */
    void releaseAll() {
        releaseLocal(true);
    }

    private void releaseLocal(final boolean all) {
        final var held = localPeers.entrySet().iterator();
        while (held.hasNext()) {
            final var next = held.next();
            final FabricLocalEndpoints.Entry local = next.getValue();
            if ((!all && !local.gone) || released.contains(next.getKey())) {
                continue;
            }
            final long handle = next.getKey();
            fiAddr.set(JAVA_LONG, 0, fiAddr(handle));
            final int rc = endpoint.avRemove(fiAddr);
            if (rc < 0) {
                LOG.warn(
                        "fi_av_remove of {} failed: {}",
                        addresses.get(handle),
                        endpoint.library().describe(rc));
            }
            released.add(handle);
            FabricLocalEndpoints.release(local);
            if (local.gone) {
                markUnreachable(handle, CLOSED_HERE);
            }
        }
    }

    /** The peer's fi_addr_t now, for a post to {@code handle}. Does not allocate. */
    long fiAddr(final long handle) {
        if (moved.isEmpty()) {
            return handle;
        }
        final Entry entry = moved.get(handle);
        return entry == null ? handle : entry.fiAddr;
    }

    /** How often {@code handle} was {@linkplain #reset reset}: a post made in an older epoch went with the old connection. */
    int epoch(final long handle) {
        if (moved.isEmpty()) {
            return 0;
        }
        final Entry entry = moved.get(handle);
        return entry == null ? 0 : entry.epoch;
    }

    /**
     * Removes the peer from the AV and inserts it again. On the RxM providers (with FI_AV_REMOVE_CLEANUP, which
     * {@link FabricLibrary} sets) the removal closes the connection: what the provider still queued for the peer is
     * dropped and reported failed, and the next post connects anew. Control path.
     *
     * @return whether the peer is in the AV again; false (logged) when either call failed, and posts to it then fail
     */
    boolean reset(final long handle) {
        final NetworkAddress peer = addresses.get(handle);
        if (peer == null) {
            return false;
        }
        final Entry entry = moved.computeIfAbsent(handle, Entry::new);
        entry.epoch++;
        fiAddr.set(JAVA_LONG, 0, entry.fiAddr);
        final int removed = endpoint.avRemove(fiAddr);
        final byte[] name = FabricAddress.endpointName(peer, endpoint.provider());
        final MemorySegment bytes = arena.allocate(name.length);
        MemorySegment.copy(name, 0, bytes, JAVA_BYTE, 0, name.length);
        final int inserted = removed < 0 ? removed : endpoint.avInsert(bytes, fiAddr);
        if (inserted != 1) {
            LOG.warn(
                    "resetting the connection to {} failed ({}): operations to it fail until the engine closes",
                    peer,
                    removed < 0
                            ? "fi_av_remove: " + endpoint.library().describe(removed)
                            : "fi_av_insert: " + endpoint.library().describe(inserted));
            entry.fiAddr = FI_ADDR_NOTAVAIL;
            return false;
        }
        entry.fiAddr = fiAddr.get(JAVA_LONG, 0);
        return true;
    }

    /** The address behind a handle, or null. */
    NetworkAddress address(final long handle) {
        return addresses.get(handle);
    }

    /** Records that operations to {@code handle} failed because it could not be reached. */
    void markUnreachable(final long handle, final String reason) {
        if (addresses.containsKey(handle) && !reason.equals(failures.get(handle))) {
            failures.put(handle, reason);
            publish();
        }
    }

    /** Records that an operation to {@code handle} succeeded again. */
    void markReachable(final long handle) {
        if (failures.remove(handle) != null) {
            publish();
        }
    }

    /** Where a peer is in the AV now, and how often it was reset. */
    private static final class Entry {
        long fiAddr;
        int epoch;

        Entry(final long fiAddr) {
            this.fiAddr = fiAddr;
        }
    }

    List<PeerInfo> snapshot() {
        return snapshot;
    }

    private void publish() {
        final List<PeerInfo> out = new ArrayList<>(addresses.size());
        addresses.forEach((handle, address) -> {
            final String failure = failures.get(handle);
            out.add(new PeerInfo(
                    group,
                    nic,
                    address,
                    failure == null ? PeerState.CONNECTED : PeerState.UNREACHABLE,
                    failure == null ? "" : failure));
        });
        snapshot = List.copyOf(out);
    }
}
