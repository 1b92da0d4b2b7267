package dev.transferengine.transport.fabric;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.transferengine.MalformedDescriptorException;
import dev.transferengine.NetAddr;
import dev.transferengine.PeerInfo;
import dev.transferengine.PeerUnreachableException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.Object2LongHashMap;

/**
 * The peers one endpoint knows: each address is inserted into the AV once (fi_av_insert) and its fi_addr_t is the
 * handle the engine gets back. Keeps a snapshot for {@link #snapshot()} that other threads read.
 * Resolution runs on the worker; lookups by handle do not allocate.
 */
final class FabricPeers {

    private static final String SHM_PREFIX = "fi_shm://";

    private final FabricEndpoint endpoint;
    private final int group;
    private final int nic;
    private final MemorySegment fiAddr;
    private final Arena arena;
    private final Object2LongHashMap<NetAddr> handles = new Object2LongHashMap<>(-1);
    private final Long2ObjectHashMap<NetAddr> addresses = new Long2ObjectHashMap<>();
    private final Long2ObjectHashMap<String> failures = new Long2ObjectHashMap<>();
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
     * @throws PeerUnreachableException     if an shm peer's region no longer exists
     */
    long resolve(final NetAddr peer) {
        final long known = handles.getValue(peer);
        if (known != -1) {
            return known;
        }
        final byte[] name = FabricAddress.endpointName(peer, endpoint.provider());
        ensureShmPeerExists(peer, name);
        final MemorySegment bytes = arena.allocate(name.length);
        MemorySegment.copy(name, 0, bytes, JAVA_BYTE, 0, name.length);
        final int inserted = endpoint.avInsert(bytes, fiAddr);
        if (inserted != 1) {
            throw new MalformedDescriptorException("fi_av_insert refused fabric address " + peer + " on provider "
                + endpoint.provider() + ": " + (inserted < 0 ? endpoint.library().describe(inserted)
                : "inserted " + inserted));
        }
        final long handle = fiAddr.get(JAVA_LONG, 0);
        handles.put(peer, handle);
        addresses.put(handle, peer);
        publish();
        return handle;
    }

    /**
     * libfabric 1.17's shm provider crashes inside fi_av_insert when the peer's shared-memory region is gone (its
     * process closed the endpoint or exited), so check that the region still exists first.
     */
    private void ensureShmPeerExists(final NetAddr peer, final byte[] name) {
        if (!"shm".equals(endpoint.provider()) || FabricEndpoint.isOpenHere(name)) {
            return; // an open endpoint of this process exists for sure, whatever /dev/shm shows this instant
        }
        String text = new String(name, StandardCharsets.US_ASCII);
        final int nul = text.indexOf('\0');
        text = nul >= 0 ? text.substring(0, nul) : text;
        final String region = text.startsWith(SHM_PREFIX) ? text.substring(SHM_PREFIX.length()) : text;
        if (region.isEmpty() || region.contains("/") || !Files.exists(Path.of("/dev/shm", region))) {
            throw new PeerUnreachableException(peer, "its shared-memory region /dev/shm/" + region
                + " does not exist (the peer closed its endpoint or exited)");
        }
    }

    /** The address behind a handle, or null. */
    NetAddr address(final long handle) {
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

    List<PeerInfo> snapshot() {
        return snapshot;
    }

    private void publish() {
        final List<PeerInfo> out = new ArrayList<>(addresses.size());
        addresses.forEach((handle, address) -> {
            final String failure = failures.get(handle);
            out.add(new PeerInfo(group, nic, address, failure == null ? "CONNECTED" : "UNREACHABLE",
                failure == null ? "" : failure));
        });
        snapshot = List.copyOf(out);
    }
}
