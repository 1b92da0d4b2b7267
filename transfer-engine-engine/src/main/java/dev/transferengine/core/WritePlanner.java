package dev.transferengine.core;

import dev.transferengine.BarrierWrite;
import dev.transferengine.GroupRouting;
import dev.transferengine.ImmWrite;
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
import dev.transferengine.spi.PageBatch;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Turns a request into per-NIC pieces, pulled one at a time: {@link #plan} starts a request and says how many pieces
 * it has, {@link #next} fills the group's reused {@link WriteDescriptor} with the next one ({@link #nextPages} a
 * {@link PageBatch} with the next pages of a paged write that share a NIC). Shards single writes,
 * spreads pages, barrier destinations and scatter targets over the NICs in contiguous ranges, and rotates the first
 * NIC from request to request so load spreads. Reads are cut by the same rules as the writes of the same shape; their
 * descriptor's source fields name the local region the bytes land in, its target the peer's region they come from. Knows nothing of domains or completion; the caller stops pulling when
 * it abandons a request. Worker thread; allocation-free.
 */
final class WritePlanner {

    private final int nics;
    private int roundRobin;

    private @Nullable TransferRequest request;
    private int pieces;
    /** The next piece's index, 0 to {@link #pieces}. */
    private int cursor;
    /** How many pieces {@link #next} or {@link #nextPages} handed out last. */
    private int handedOut;
    /** The NIC of piece 0, and how many consecutive pieces share a NIC. */
    private int first;

    private int rangeSize;
    private long shardSize;
    /** The peer's region of the piece {@link #next} filled last: a write's destination, a read's source. */
    private @Nullable RegionDescriptor dst;

    WritePlanner(final int nics) {
        this.nics = nics;
    }

    /**
     * Starts {@code request}, forgetting any earlier one.
     *
     * @return how many pieces it has; each completes once
     */
    int plan(final TransferRequest request) {
        this.request = request;
        cursor = 0;
        rangeSize = 1;
        first = 0;
        switch (request) {
            case SingleWrite w -> planSingle(w.routing(), w.length());
            case SingleRead r -> planSingle(r.routing(), r.length());
            case PagedWrite w -> planPaged(w.pageCount());
            case PagedRead r -> planPaged(r.pageCount());
            case ImmWrite w -> {
                pieces = 1;
                first = w.routing() instanceof Routing.Pinned pinned ? pinned.nic() : nextNics(1);
            }
            case BarrierWrite w -> {
                pieces = w.dsts().size();
                if (w.routing() instanceof Routing.Pinned pinned) {
                    rangeSize = pieces;
                    first = pinned.nic();
                } else {
                    rangeSize = Sharding.rangeSize(pieces, nics);
                    first = nextNics(Sharding.rangeCount(pieces, nics));
                }
            }
            case ScatterWrite w -> planScatter(w.routing(), w.targets().size());
            case ScatterRead r -> planScatter(r.routing(), r.sources().size());
        }
        return pieces;
    }

    private void planSingle(final Routing routing, final long length) {
        pieces = routing instanceof Routing.Sharded sharded ? sharded.shards() : 1;
        first = routing instanceof Routing.Pinned pinned ? pinned.nic() : nextNics(pieces);
        shardSize = Sharding.shardSize(length, pieces);
    }

    private void planPaged(final int pageCount) {
        pieces = pageCount;
        if (pieces > 0) {
            rangeSize = Sharding.rangeSize(pieces, nics);
            first = nextNics(Sharding.rangeCount(pieces, nics));
        }
    }

    private void planScatter(final GroupRouting routing, final int targets) {
        if (routing instanceof GroupRouting.ShardBytes) {
            pieces = targets * nics;
        } else {
            pieces = targets;
            rangeSize = routing instanceof GroupRouting.SingleNic ? targets : Sharding.rangeSize(targets, nics);
            first = routing instanceof GroupRouting.SingleNic single ? single.nic() : 0;
        }
    }

    /**
     * Fills {@code out} with the next piece: its source, its target (the peer handle is -1 when the caller must
     * resolve {@link #destination}) and its imm; the token is the caller's.
     *
     * @return the NIC the piece goes through, or -1 once every piece was handed out
     */
    int next(final WriteDescriptor out) {
        final TransferRequest current = request;
        if (current == null || cursor == pieces) {
            return -1;
        }
        final int p = cursor++;
        handedOut = 1;
        return switch (current) {
            case SingleWrite w -> {
                final int nic = (first + p) % nics;
                final long offset = Sharding.shardOffset(w.length(), shardSize, p);
                source(
                        out,
                        (Region) w.src(),
                        nic,
                        w.srcOffset() + offset,
                        Sharding.shardLength(w.length(), shardSize, p));
                yield target(
                        out,
                        nic,
                        w.dst(),
                        w.dstOffset() + offset,
                        -1,
                        w.imm().isPresent(),
                        w.imm().orElse(0));
            }
            case PagedWrite w -> {
                final int nic = (first + p / rangeSize) % nics;
                source(out, (Region) w.src(), nic, w.srcOffset() + w.srcStride() * w.srcPage(p), w.pageLength());
                final long dstOffset = w.dstOffset() + w.dstStride() * w.dstPage(p);
                yield target(
                        out,
                        nic,
                        w.dst(),
                        dstOffset,
                        -1,
                        w.imm().isPresent(),
                        w.imm().orElse(0));
            }
            case ImmWrite w -> {
                source(out, null, first, 0, 0);
                yield target(out, first, w.dst(), 0, -1, true, w.value());
            }
            case BarrierWrite w -> {
                final int nic = (first + p / rangeSize) % nics;
                source(out, null, nic, 0, 0);
                yield target(out, nic, w.dsts().get(p), 0, peerHandle(w.group(), p, nic), true, w.value());
            }
            case ScatterWrite w -> scatter(w, p, out);
            case SingleRead r -> {
                final int nic = (first + p) % nics;
                final long offset = Sharding.shardOffset(r.length(), shardSize, p);
                source(
                        out,
                        (Region) r.dst(),
                        nic,
                        r.dstOffset() + offset,
                        Sharding.shardLength(r.length(), shardSize, p));
                yield target(out, nic, r.src(), r.srcOffset() + offset, -1, false, 0);
            }
            case PagedRead r -> {
                final int nic = (first + p / rangeSize) % nics;
                source(out, (Region) r.dst(), nic, r.dstOffset() + r.dstStride() * r.dstPage(p), r.pageLength());
                yield target(out, nic, r.src(), r.srcOffset() + r.srcStride() * r.srcPage(p), -1, false, 0);
            }
            case ScatterRead r -> gather(r, p, out);
        };
    }

    /**
     * Fills {@code out} (emptied first) with the next pages of the current request, a {@link PagedWrite}: as many as
     * it holds of the pages that go through one NIC; the peer handle is -1, for the caller to resolve
     * {@link #destination}, and the token is the caller's.
     *
     * @return the NIC the pages go through, or -1 once every page was handed out
     */
    int nextPages(final PagedWrite w, final PageBatch out) {
        out.clear();
        if (cursor == pieces) {
            return -1;
        }
        final int nic = (first + cursor / rangeSize) % nics;
        final int rangeEnd = Math.min(pieces, (cursor / rangeSize + 1) * rangeSize);
        final int end = Math.min(rangeEnd, cursor + out.capacity());
        final Region src = (Region) w.src();
        final RegionDescriptor to = w.dst();
        out.source(src.segment(), src.key(nic), w.pageLength())
                .target(-1, to.address(), to.nic(nic).rkey())
                .imm(w.imm().isPresent(), w.imm().orElse(0));
        for (int p = cursor; p < end; p++) {
            out.add(w.srcOffset() + w.srcStride() * w.srcPage(p), w.dstOffset() + w.dstStride() * w.dstPage(p));
        }
        handedOut = end - cursor;
        cursor = end;
        dst = to;
        return nic;
    }

    /** A piece of a scatter read: the local side is the destination region, the remote side source {@code p}. */
    private int gather(final ScatterRead r, final int p, final WriteDescriptor out) {
        final Region dstRegion = (Region) r.dst();
        if (r.routing() instanceof GroupRouting.ShardBytes) {
            final int i = p / nics;
            final int nic = p % nics;
            final ReadSource s = r.sources().get(i);
            final long offset = Sharding.byteSliceOffset(s.length(), nics, nic);
            source(out, dstRegion, nic, s.dstOffset() + offset, Sharding.byteSliceLength(s.length(), nics, nic));
            return target(out, nic, s.src(), s.srcOffset() + offset, peerHandle(r.group(), i, nic), false, 0);
        }
        final ReadSource s = r.sources().get(p);
        final int nic = (first + p / rangeSize) % nics;
        source(out, dstRegion, nic, s.dstOffset(), s.length());
        return target(out, nic, s.src(), s.srcOffset(), peerHandle(r.group(), p, nic), false, 0);
    }

    private int scatter(final ScatterWrite w, final int p, final WriteDescriptor out) {
        final Region src = (Region) w.src();
        final boolean hasImm = w.imm().isPresent();
        final int imm = w.imm().orElse(0);
        if (w.routing() instanceof GroupRouting.ShardBytes) {
            final int i = p / nics;
            final int nic = p % nics;
            final ScatterTarget t = w.targets().get(i);
            final long offset = Sharding.byteSliceOffset(t.length(), nics, nic);
            source(out, src, nic, t.srcOffset() + offset, Sharding.byteSliceLength(t.length(), nics, nic));
            return target(out, nic, t.dst(), t.dstOffset() + offset, peerHandle(w.group(), i, nic), hasImm, imm);
        }
        final ScatterTarget t = w.targets().get(p);
        final int nic = (first + p / rangeSize) % nics;
        source(out, src, nic, t.srcOffset(), t.length());
        return target(out, nic, t.dst(), t.dstOffset(), peerHandle(w.group(), p, nic), hasImm, imm);
    }

    /** How many pieces were not handed out yet, counting those {@link #next} or {@link #nextPages} handed out last. */
    int unposted() {
        return pieces - cursor + handedOut;
    }

    /** The address, on NIC {@code nic}, of the destination of the piece {@link #next} filled last. */
    NetworkAddress destination(final int nic) {
        return Objects.requireNonNull(dst, "no piece was handed out").nic(nic).address();
    }

    /** Drops the references to user objects once the request's pieces are posted or abandoned. */
    void clear() {
        request = null;
        dst = null;
    }

    private static void source(
            final WriteDescriptor out, final @Nullable Region src, final int nic, final long offset, final long bytes) {
        out.source(src == null ? MemorySegment.NULL : src.segment(), offset, src == null ? 0 : src.key(nic), bytes);
    }

    private int target(
            final WriteDescriptor out,
            final int nic,
            final RegionDescriptor to,
            final long toOffset,
            final long peer,
            final boolean hasImm,
            final int imm) {
        dst = to;
        out.target(peer, to.address(), toOffset, to.nic(nic).rkey()).imm(hasImm, imm);
        return nic;
    }

    private static long peerHandle(final PeerGroup group, final int peer, final int nic) {
        return group instanceof ResolvedPeerGroup resolved ? resolved.handle(peer, nic) : -1;
    }

    private int nextNics(final int count) {
        final int start = roundRobin;
        roundRobin = (roundRobin + count) % nics;
        return start;
    }
}
