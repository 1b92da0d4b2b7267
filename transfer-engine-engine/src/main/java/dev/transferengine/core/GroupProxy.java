package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionAccess;
import dev.transferengine.RegionDescriptor;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The commands other threads send a group's worker, one method each, as Aeron's {@code DriverProxy} does: each
 * queues its command on the group's control queue and returns at once; a result comes back through the future,
 * completed on the worker. Any thread; never blocks. The commands run on the worker against the group's
 * {@link GroupResources}.
 */
final class GroupProxy {

    private final DomainGroup group;

    GroupProxy(final DomainGroup group) {
        this.group = group;
    }

    /** Registers {@code segment} on every NIC of the group. */
    CompletableFuture<Region> register(
            final Region.Owner owner, final MemorySegment segment, final Device device, final RegionAccess access) {
        return group.call(g -> g.resources().register(owner, segment, device, access));
    }

    /** Registers the region's memory under fresh keys and drops the old ones. */
    CompletableFuture<RegionDescriptor> rekey(final Region region) {
        return group.call(g -> g.resources().rekey(region));
    }

    /** Forgets the region on every NIC; the future completes with true once it did. */
    CompletableFuture<Boolean> deregister(final Region region) {
        return group.run(g -> g.resources().deregister(region));
    }

    /** Resolves each peer's addresses, one per NIC: {@code handles[peer][nic]}. */
    CompletableFuture<long[][]> resolvePeers(final List<List<NetworkAddress>> addresses) {
        return group.call(g -> g.resources().resolvePeers(addresses));
    }

    /** Starts a receive pool: posts its buffers; the future completes with true once they are posted. */
    CompletableFuture<Boolean> addReceivePool(final Receives pool) {
        return group.run(g -> g.resources().addReceivePool(pool));
    }

    /** The user is done with buffer {@code index} of {@code pool}: it is posted again (or kept for a credit). */
    void returnReceiveBuffer(final Receives pool, final int index) {
        group.control(g -> pool.returned(index));
    }

    /** Grants {@code n} credits to a credited receive pool. */
    void grant(final Receives pool, final long n) {
        group.control(g -> pool.credit(n));
    }
}
