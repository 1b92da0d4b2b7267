package dev.transferengine.core;

import dev.transferengine.BarrierWrite;
import dev.transferengine.GroupRouting;
import dev.transferengine.ImmWrite;
import dev.transferengine.MemoryRegion;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PagedRead;
import dev.transferengine.PagedWrite;
import dev.transferengine.PeerGroup;
import dev.transferengine.ReadSource;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.Routing;
import dev.transferengine.ScatterRead;
import dev.transferengine.ScatterTarget;
import dev.transferengine.ScatterWrite;
import dev.transferengine.SingleRead;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferRequest;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.MalformedDescriptorException;
import dev.transferengine.exceptions.NicCountMismatchException;
import dev.transferengine.exceptions.RegionBoundsException;
import dev.transferengine.exceptions.RemoteAccessException;

import java.util.List;

/**
 * Checks a request on the caller's thread before it is queued, so bad input fails at once with an exception that
 * names the problem, and nothing is ever written (or read) for it: regions, bounds, NIC counts, and the access the
 * peer's descriptor grants. Returns the group that will carry the request.
 */
final class RequestChecks {

    /** A check of the request's one source or destination, which has no index. */
    private static final int NO_INDEX = -1;

    private final Engine engine;

    RequestChecks(final Engine engine) {
        this.engine = engine;
    }

    int check(final TransferRequest request) {
        return switch (request) {
            case SingleWrite w -> single(w);
            case PagedWrite w -> paged(w);
            case ImmWrite w -> {
                routing(w.routing(), 0);
                descriptor(w.dst(), 0, "destination");
                writable(w.dst(), "destination");
                yield 0;
            }
            case BarrierWrite w -> barrier(w);
            case ScatterWrite w -> scatter(w);
            case SingleRead r -> singleRead(r);
            case PagedRead r -> pagedRead(r);
            case ScatterRead r -> scatterRead(r);
        };
    }

    private int singleRead(final SingleRead r) {
        final Region dst = destination(r.dst());
        routing(r.routing(), dst.group());
        descriptor(r.src(), dst.group(), "read source");
        readable(r.src(), "read source");
        bounds("read source", r.srcOffset(), r.length(), r.src().length());
        bounds("read destination", r.dstOffset(), r.length(), dst.length());
        return dst.group();
    }

    private int pagedRead(final PagedRead r) {
        final Region dst = destination(r.dst());
        descriptor(r.src(), dst.group(), "read source");
        readable(r.src(), "read source");
        for (int k = 0; k < r.pageCount(); k++) {
            pageBounds(
                    "read source",
                    k,
                    r.srcOffset(),
                    r.srcStride(),
                    r.srcPage(k),
                    r.pageLength(),
                    r.src().length());
            pageBounds("read destination", k, r.dstOffset(), r.dstStride(), r.dstPage(k), r.pageLength(), dst.length());
        }
        return dst.group();
    }

    private int scatterRead(final ScatterRead r) {
        final Region dst = destination(r.dst());
        if (r.routing() instanceof GroupRouting.SingleNic single && single.nic() >= engine.nicCount(dst.group())) {
            throw new InvalidRequestException("singleNic(" + single.nic() + ") but group " + dst.group() + " has "
                    + engine.nicCount(dst.group()) + " NICs");
        }
        peerGroup(r.group(), r.sources().size(), dst.group(), "read destination");
        final List<ReadSource> sources = r.sources();
        for (int i = 0; i < sources.size(); i++) {
            final ReadSource s = sources.get(i);
            descriptor(s.src(), dst.group(), "read source", i);
            readable(s.src(), "read source", i);
            groupMember(r.group(), i, s.src(), "read source");
            bounds("read source", i, s.srcOffset(), s.length(), s.src().length());
            bounds("destination of read source", i, s.dstOffset(), s.length(), dst.length());
        }
        return dst.group();
    }

    /** The local region a read lands in: ours, registered, and writable memory. */
    private Region destination(final MemoryRegion region) {
        final Region r = local(region, "read destination");
        if (r.segment().isReadOnly()) {
            throw new InvalidRequestException(
                    "read destination " + region + " is a read-only segment; the bytes read could not land in it");
        }
        return r;
    }

    private static void readable(final RegionDescriptor src, final String what) {
        readable(src, what, NO_INDEX);
    }

    private static void readable(final RegionDescriptor src, final String what, final int index) {
        if (!src.access().allowsRemoteRead()) {
            throw new RemoteAccessException(
                    RemoteAccessException.Reason.NOT_READABLE,
                    label(what, index) + " " + src + " was registered " + src.access() + "; its owner refuses reads");
        }
    }

    private static void writable(final RegionDescriptor dst, final String what) {
        writable(dst, what, NO_INDEX);
    }

    private static void writable(final RegionDescriptor dst, final String what, final int index) {
        if (!dst.access().allowsRemoteWrite()) {
            throw new RemoteAccessException(
                    RemoteAccessException.Reason.NOT_WRITABLE,
                    label(what, index) + " " + dst + " was registered " + dst.access() + "; its owner refuses writes");
        }
    }

    /**
     * What a check names: {@code what}, followed by the index of the target or source it checks, if any. Built only
     * when a check fails: a scatter to eight peers checked four labels per target, and concatenating them on every
     * submit was nearly all of a valid submit's allocation (about 1.2 KB of the posting thread's per scatter).
     */
    private static String label(final String what, final int index) {
        return index == NO_INDEX ? what : what + " " + index;
    }

    private int single(final SingleWrite w) {
        final Region src = source(w.src());
        routing(w.routing(), src.group());
        descriptor(w.dst(), src.group(), "destination");
        writable(w.dst(), "destination");
        bounds("source", w.srcOffset(), w.length(), src.length());
        bounds("destination", w.dstOffset(), w.length(), w.dst().length());
        return src.group();
    }

    private int paged(final PagedWrite w) {
        final Region src = source(w.src());
        descriptor(w.dst(), src.group(), "destination");
        writable(w.dst(), "destination");
        for (int k = 0; k < w.pageCount(); k++) {
            pageBounds("source", k, w.srcOffset(), w.srcStride(), w.srcPage(k), w.pageLength(), src.length());
            pageBounds(
                    "destination",
                    k,
                    w.dstOffset(),
                    w.dstStride(),
                    w.dstPage(k),
                    w.pageLength(),
                    w.dst().length());
        }
        return src.group();
    }

    private int barrier(final BarrierWrite w) {
        routing(w.routing(), 0);
        peerGroup(w.group(), w.dsts().size(), 0, "source region");
        for (int i = 0; i < w.dsts().size(); i++) {
            final RegionDescriptor dst = w.dsts().get(i);
            descriptor(dst, 0, "barrier destination", i);
            writable(dst, "barrier destination", i);
            groupMember(w.group(), i, dst, "target");
        }
        return 0;
    }

    private int scatter(final ScatterWrite w) {
        final Region src = source(w.src());
        if (w.routing() instanceof GroupRouting.SingleNic single && single.nic() >= engine.nicCount(src.group())) {
            throw new InvalidRequestException("singleNic(" + single.nic() + ") but group " + src.group() + " has "
                    + engine.nicCount(src.group()) + " NICs");
        }
        peerGroup(w.group(), w.targets().size(), src.group(), "source region");
        final List<ScatterTarget> targets = w.targets();
        for (int i = 0; i < targets.size(); i++) {
            final ScatterTarget t = targets.get(i);
            descriptor(t.dst(), src.group(), "scatter target", i);
            writable(t.dst(), "scatter target", i);
            groupMember(w.group(), i, t.dst(), "target");
            bounds("source of scatter target", i, t.srcOffset(), t.length(), src.length());
            bounds("scatter target", i, t.dstOffset(), t.length(), t.dst().length());
        }
        return src.group();
    }

    private Region source(final MemoryRegion region) {
        return local(region, "source region");
    }

    private Region local(final MemoryRegion region, final String what) {
        if (!(region instanceof Region r) || !r.belongsTo(engine)) {
            throw new InvalidRequestException(what + " " + region + " was not registered with this engine");
        }
        if (!r.isRegistered()) {
            throw new InvalidRequestException(what + " " + region + " was deregistered");
        }
        return r;
    }

    private void routing(final Routing routing, final int group) {
        final int nics = engine.nicCount(group);
        switch (routing) {
            case Routing.Sharded s
            when s.shards() > nics ->
                throw new InvalidRequestException(
                        "sharded(" + s.shards() + ") but group " + group + " has " + nics + " NICs");
            case Routing.Pinned p
            when p.nic() >= nics ->
                throw new InvalidRequestException(
                        "pinned(" + p.nic() + ") but group " + group + " has " + nics + " NICs");
            default -> {}
        }
    }

    private void descriptor(final RegionDescriptor dst, final int group, final String what) {
        descriptor(dst, group, what, NO_INDEX);
    }

    private void descriptor(final RegionDescriptor dst, final int group, final String what, final int index) {
        final int nics = engine.nicCount(group);
        if (dst.nicCount() != nics) {
            throw new NicCountMismatchException(label(what, index) + " RegionDescriptor has " + dst.nicCount()
                    + " NICs but group " + group + " has " + nics + "; both sides must use the same NIC count");
        }
        for (int nic = 0; nic < nics; nic++) {
            final NetworkAddress address = dst.nic(nic).address();
            if (!address.transport().equals(engine.addressTransport())) {
                throw new MalformedDescriptorException(label(what, index) + " NIC " + nic + " is a '"
                        + address.transport()
                        + "' address but this engine uses '" + engine.addressTransport() + "'");
            }
        }
    }

    private void peerGroup(final PeerGroup group, final int size, final int localGroup, final String local) {
        if (PeerGroup.NONE.equals(group)) {
            return;
        }
        if (!(group instanceof ResolvedPeerGroup resolved) || !resolved.belongsTo(engine)) {
            throw new InvalidRequestException("peer group " + group + " was not made by this engine");
        }
        if (localGroup != 0) {
            throw new InvalidRequestException(
                    "peer groups are resolved on group 0 but the " + local + " is on group " + localGroup);
        }
        if (group.size() != size) {
            throw new InvalidRequestException(
                    "peer group has " + group.size() + " peers but the request names " + size);
        }
    }

    private static void groupMember(
            final PeerGroup group, final int peer, final RegionDescriptor dst, final String role) {
        if (PeerGroup.NONE.equals(group)) {
            return;
        }
        final List<NetworkAddress> addresses = group.peers().get(peer);
        for (int nic = 0; nic < addresses.size(); nic++) {
            if (!addresses.get(nic).equals(dst.nic(nic).address())) {
                throw new InvalidRequestException(role + " " + peer + " NIC " + nic + " is "
                        + dst.nic(nic).address() + " but peer " + peer
                        + " of the group is " + addresses.get(nic) + "; " + role
                        + "s must follow the group's order");
            }
        }
    }

    private static void bounds(final String what, final long offset, final long length, final long size) {
        bounds(what, NO_INDEX, offset, length, size);
    }

    private static void bounds(
            final String what, final int index, final long offset, final long length, final long size) {
        if (offset > size || length > size - offset) {
            throw new RegionBoundsException(label(what, index) + ": " + length + " bytes at offset " + offset
                    + " fall outside the region of " + size + " bytes");
        }
    }

    private static void pageBounds(
            final String what,
            final int k,
            final long offset,
            final long stride,
            final int page,
            final long pageLength,
            final long size) {
        final long start;
        try {
            start = Math.addExact(offset, Math.multiplyExact(stride, (long) page));
        } catch (final ArithmeticException e) {
            throw new RegionBoundsException(what + " page " + k + " (index " + page + ") overflows the address range");
        }
        if (start > size || pageLength > size - start) {
            throw new RegionBoundsException(what + " page " + k + " (index " + page + "): " + pageLength
                    + " bytes at offset " + start + " fall outside the region of " + size + " bytes");
        }
    }
}
