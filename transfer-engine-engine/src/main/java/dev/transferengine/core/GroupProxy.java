package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionAccess;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferListener;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * The commands other threads send a group's worker, one method each, as Aeron's {@code DriverProxy} does: each
 * queues a typed command on the group's control queue and returns at once; a result comes back through the command,
 * which is the caller's future, completed on the worker. One object per command and no lambda: the future the
 * caller needs anyway carries the arguments. The per-message commands of a receive pool (a buffer back from the
 * listener, credits) take no object at all: they go through the pool's own ring ({@link Receives}). Any thread;
 * never blocks. The commands run on the worker against the group's {@link GroupResources}.
 */
final class GroupProxy {

    /**
     * A command with its result: queued on the control queue, run once on the worker, and the future its caller
     * waits on.
     *
     * @param <T> the result's type
     */
    abstract static class Command<T> extends CompletableFuture<T> {

        /** Worker thread: runs the command; an exception fails the future, an {@link Error} is rethrown too. */
        final void run(final DomainGroup group) {
            try {
                complete(execute(group));
            } catch (final RuntimeException e) {
                completeExceptionally(e);
            } catch (final Error e) {
                completeExceptionally(e);
                throw e;
            }
        }

        abstract T execute(DomainGroup group);
    }

    private static final class Register extends Command<Region> {
        private final Region.Owner owner;
        private final MemorySegment segment;
        private final Device device;
        private final RegionAccess access;
        private final @Nullable EngineAllocation owned;

        Register(
                final Region.Owner owner,
                final MemorySegment segment,
                final Device device,
                final RegionAccess access,
                final @Nullable EngineAllocation owned) {
            this.owner = owner;
            this.segment = segment;
            this.device = device;
            this.access = access;
            this.owned = owned;
        }

        @Override
        Region execute(final DomainGroup group) {
            return group.resources().register(owner, segment, device, access, owned);
        }
    }

    private static final class Rekey extends Command<RegionDescriptor> {
        private final Region region;

        Rekey(final Region region) {
            this.region = region;
        }

        @Override
        RegionDescriptor execute(final DomainGroup group) {
            return group.resources().rekey(region);
        }
    }

    private static final class Deregister extends Command<Boolean> {
        private final Region region;

        Deregister(final Region region) {
            this.region = region;
        }

        @Override
        Boolean execute(final DomainGroup group) {
            group.resources().deregister(region);
            final EngineAllocation owned = region.owned();
            if (owned != null) {
                group.drainBeforeFree(owned);
            }
            return Boolean.TRUE;
        }
    }

    private static final class ResolvePeers extends Command<long[][]> {
        private final List<List<NetworkAddress>> addresses;

        ResolvePeers(final List<List<NetworkAddress>> addresses) {
            this.addresses = addresses;
        }

        @Override
        long[][] execute(final DomainGroup group) {
            return group.resources().resolvePeers(addresses);
        }
    }

    private static final class AddReceivePool extends Command<Boolean> {
        private final Receives pool;

        AddReceivePool(final Receives pool) {
            this.pool = pool;
        }

        @Override
        Boolean execute(final DomainGroup group) {
            group.resources().addReceivePool(pool);
            return Boolean.TRUE;
        }
    }

    private static final class Cancel extends Command<Boolean> {
        private final TransferListener listener;

        Cancel(final TransferListener listener) {
            this.listener = listener;
        }

        @Override
        Boolean execute(final DomainGroup group) {
            group.cancel(listener);
            return Boolean.TRUE;
        }
    }

    private final DomainGroup group;

    GroupProxy(final DomainGroup group) {
        this.group = group;
    }

    private <T> Command<T> send(final Command<T> command) {
        group.control(command);
        return command;
    }

    /** Registers {@code segment} on every NIC of the group; {@code owned}: the engine allocated it (or null). */
    CompletableFuture<Region> register(
            final Region.Owner owner,
            final MemorySegment segment,
            final Device device,
            final RegionAccess access,
            final @Nullable EngineAllocation owned) {
        return send(new Register(owner, segment, device, access, owned));
    }

    /** Registers the region's memory under fresh keys and drops the old ones. */
    CompletableFuture<RegionDescriptor> rekey(final Region region) {
        return send(new Rekey(region));
    }

    /**
     * Forgets the region on every NIC; the future completes with true once it did. Memory the engine allocated for
     * it then drains ({@link EngineAllocation#drained()}).
     */
    CompletableFuture<Boolean> deregister(final Region region) {
        return send(new Deregister(region));
    }

    /** Resolves each peer's addresses, one per NIC: {@code handles[peer][nic]}. */
    CompletableFuture<long[][]> resolvePeers(final List<List<NetworkAddress>> addresses) {
        return send(new ResolvePeers(addresses));
    }

    /** Starts a receive pool: posts its buffers; the future completes with true once they are posted. */
    CompletableFuture<Boolean> addReceivePool(final Receives pool) {
        return send(new AddReceivePool(pool));
    }

    /**
     * Cancels the operation submitted with {@code listener} if this group has it; see {@link DomainGroup#cancel}. The
     * operation's own completion says how it ended, so nobody waits for the command.
     */
    void cancel(final TransferListener listener) {
        group.control(new Cancel(listener));
    }
}
