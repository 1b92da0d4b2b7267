package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.EngineCounter;
import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionAccess;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.spi.Domain;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import org.agrona.collections.Int2ObjectHashMap;
import org.jspecify.annotations.Nullable;

/**
 * What a group's NICs hold that a restart must re-create, in one place: the registered regions (registered again
 * under new keys), the resolved peer groups (resolved again in place) and the receive pools (their buffers posted
 * again). Worker thread only; reached through the {@link GroupProxy}'s commands.
 */
final class GroupResources {

    private final int index;
    /** The {@link dev.transferengine.spi.DeviceMemory} provider that names device regions' allocations. */
    private final String deviceMemory;
    /** The group's NICs; the group reopens them in place, so this always sees the current ones. */
    private final Domain[] domains;

    /**
     * What a restart registers again on the new NICs. A list: the scope sweep walks it by index every millisecond,
     * without an iterator's garbage.
     */
    private final ArrayList<Region> regions = new ArrayList<>();
    /** How many of {@link #regions} have a device allocation the sweep asks the provider about. */
    private int watchedAllocations;

    private final List<ResolvedPeers> peerGroups = new ArrayList<>();
    private final Int2ObjectHashMap<Receives> receivePools = new Int2ObjectHashMap<>();
    /** The same pools, walked by index every duty cycle for buffers and credits they were given back. */
    private final ArrayList<Receives> pools = new ArrayList<>();

    /** A peer group resolved on these NICs: {@code handles[peer][nic]}, re-resolved in place after a restart. */
    private static final class ResolvedPeers {
        final List<List<NetworkAddress>> addresses;
        final long[][] handles;

        ResolvedPeers(final List<List<NetworkAddress>> addresses, final long[][] handles) {
            this.addresses = addresses;
            this.handles = handles;
        }
    }

    GroupResources(final int index, final String deviceMemory, final Domain[] domains) {
        this.index = index;
        this.deviceMemory = deviceMemory;
        this.domains = domains;
    }

    /**
     * Registers {@code segment} on every NIC, allowing peers {@code access}; a restart registers it again. Device
     * memory is first asked for its allocation, which the scope sweep watches. {@code owned} is the engine's
     * allocation of the memory, freed after deregistration, or null for the caller's memory.
     *
     * @throws InvalidRequestException if the device memory provider knows no allocation at the segment's address
     */
    Region register(
            final Region.Owner owner,
            final MemorySegment segment,
            final Device device,
            final RegionAccess access,
            final @Nullable EngineAllocation owned) {
        final DeviceAllocation allocation = DeviceAllocation.of(deviceMemory, segment, device);
        final Region region =
                new Region(owner, segment, device, index, registerKeys(segment, device, access), allocation, owned);
        regions.add(region);
        if (allocation != null) {
            watchedAllocations++;
        }
        return region;
    }

    /**
     * Deregisters the regions whose memory the application freed while they were registered (closed its arena, or,
     * for device memory, freed the allocation the provider named at registration), so that the NICs stop accepting
     * writes into it: a remote write would otherwise land in freed memory, or in the next allocation at that address
     * (issue 16, item 5). Counted and logged; what it cannot close is the window until the next sweep (a millisecond,
     * or one poll while device memory is watched), and memory a caching allocator reuses without freeing it
     * (docs/security.md). One provider call per device region.
     *
     * @return how many it deregistered
     */
    int deregisterFreed(final Counters counters, final ThrottledLog errors) {
        int freed = 0;
        for (int i = regions.size() - 1; i >= 0; i--) { // backwards: deregister removes the region
            final Region region = regions.get(i);
            final String loss = loss(region);
            if (loss != null && region.markDeregistered()) {
                deregister(region);
                region.forget();
                counters.increment(EngineCounter.REGIONS_FREED);
                errors.warn(
                        "group " + index + ": " + region + ": " + loss + "; deregistered it now, so peers' writes to"
                                + " it are refused",
                        null);
                freed++;
            }
        }
        return freed;
    }

    /** Null while the region's memory is live; otherwise how it was freed. */
    private static @Nullable String loss(final Region region) {
        if (!region.segment().scope().isAlive()) {
            return "its arena was closed while registered (before deregister)";
        }
        final DeviceAllocation allocation = region.allocation();
        return allocation == null ? null : allocation.loss();
    }

    /**
     * Whether a region's device allocation is watched. Then the group sweeps before every poll, not every millisecond:
     * a fabric provider copies peers' writes into device memory while the worker polls (shm's FI_HMEM), with no
     * check of its own, so a sweep a millisecond old let one write land in the next allocation (docs/security.md).
     */
    boolean watchesDeviceMemory() {
        return watchedAllocations > 0;
    }

    void deregister(final Region region) {
        if (regions.remove(region) && region.allocation() != null) {
            watchedAllocations--;
        }
        for (int nic = 0; nic < domains.length; nic++) {
            domains[nic].deregister(region.key(nic));
        }
    }

    /** Registers the region's memory under fresh keys, then drops the old ones: old-key writes are refused. */
    RegionDescriptor rekey(final Region region) {
        if (!region.isRegistered()) {
            throw new InvalidRequestException(region + " was deregistered; it cannot be re-keyed");
        }
        final Region.Keys old = region.keys();
        final Region.Keys fresh = registerKeys(region.segment(), region.device(), region.access());
        region.keys(fresh);
        for (int nic = 0; nic < domains.length; nic++) {
            domains[nic].deregister(old.key(nic));
        }
        return fresh.descriptor();
    }

    private Region.Keys registerKeys(final MemorySegment segment, final Device device, final RegionAccess access) {
        final long[] keys = new long[domains.length];
        int nic = 0;
        try {
            for (; nic < keys.length; nic++) {
                keys[nic] = domains[nic].register(segment, device, access);
            }
        } catch (final RuntimeException e) {
            for (int done = 0; done < nic; done++) {
                domains[done].deregister(keys[done]);
            }
            throw e;
        }
        final List<RegionDescriptor.Nic> nics = new ArrayList<>(keys.length);
        for (int n = 0; n < keys.length; n++) {
            nics.add(new RegionDescriptor.Nic(domains[n].address(), keys[n]));
        }
        return new Region.Keys(keys, new RegionDescriptor(segment.address(), segment.byteSize(), nics, access));
    }

    /** Resolves each peer's addresses, one per NIC: {@code handles[peer][nic]}; a restart resolves them again. */
    long[][] resolvePeers(final List<List<NetworkAddress>> addresses) {
        final ResolvedPeers peers = new ResolvedPeers(addresses, new long[addresses.size()][]);
        resolveInto(peers);
        peerGroups.add(peers);
        return peers.handles;
    }

    private void resolveInto(final ResolvedPeers peers) {
        for (int p = 0; p < peers.addresses.size(); p++) {
            final long[] handles = new long[domains.length];
            for (int nic = 0; nic < domains.length; nic++) {
                handles[nic] = domains[nic].resolve(peers.addresses.get(p).get(nic));
            }
            peers.handles[p] = handles;
        }
    }

    void addReceivePool(final Receives receives) {
        receivePools.put(receives.id(), receives);
        pools.add(receives);
        receives.start();
    }

    /**
     * Posts the buffers the receive pools' listeners returned and takes the credits they were granted; forgets a
     * closed pool once its memory is freed (no report can name its buffers any more).
     */
    int serveReceivePools() {
        int work = 0;
        for (int i = pools.size() - 1; i >= 0; i--) {
            final Receives pool = pools.get(i);
            work += pool.serve();
            if (pool.freed()) {
                pools.remove(i);
                receivePools.remove(pool.id());
            }
        }
        return work;
    }

    /** Whether a receive pool holds returned buffers or credits for {@link #serveReceivePools}. */
    boolean receivesPending() {
        for (int i = 0; i < pools.size(); i++) {
            if (pools.get(i).hasPending()) {
                return true;
            }
        }
        return false;
    }

    /** The receive pool with id {@code id}, or null once it closed. */
    @Nullable Receives receivePool(final int id) {
        return receivePools.get(id);
    }

    /** After the NICs were reopened: registers every region under new keys, resolves every peer group again and
     * posts every receive pool's buffers again. */
    void recreate() {
        for (final Region region : regions) {
            region.keys(registerKeys(region.segment(), region.device(), region.access()));
        }
        for (final ResolvedPeers peers : peerGroups) {
            resolveInto(peers);
        }
        for (final Receives receives : receivePools.values()) {
            receives.repost();
        }
    }
}
