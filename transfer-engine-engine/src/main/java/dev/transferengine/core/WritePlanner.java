package dev.transferengine.core;

import dev.transferengine.BarrierWrite;
import dev.transferengine.GroupRouting;
import dev.transferengine.ImmWrite;
import dev.transferengine.PagedWrite;
import dev.transferengine.PeerGroup;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.Routing;
import dev.transferengine.ScatterTarget;
import dev.transferengine.ScatterWrite;
import dev.transferengine.SingleWrite;
import dev.transferengine.WriteRequest;

import java.util.List;

/**
 * Turns a request into per-NIC pieces: shards single writes, spreads pages, barrier destinations and scatter
 * targets over the NICs in contiguous ranges, and rotates the first NIC from request to request so load spreads.
 * Knows nothing of domains or completion: each piece goes to a {@link Poster}. Worker thread; allocation-free.
 */
final class WritePlanner {

    /** Where pieces go. */
    interface Poster {

        /**
         * Posts {@code op}; {@code unposted} counts it and every later piece of the request.
         *
         * @return false when the request was abandoned: no further piece is wanted
         */
        boolean post(WriteOp op, int unposted);
    }

    private final int nics;
    private final WriteOp op = new WriteOp();
    private int roundRobin;

    WritePlanner(final int nics) {
        this.nics = nics;
    }

    /** How many pieces {@link #plan} will post for {@code request}; each completes once. */
    int pieces(final WriteRequest request) {
        return switch (request) {
            case SingleWrite w -> w.routing() instanceof Routing.Sharded sharded ? sharded.shards() : 1;
            case PagedWrite w -> w.pageCount();
            case ImmWrite w -> 1;
            case BarrierWrite w -> w.dsts().size();
            case ScatterWrite w ->
                w.routing() instanceof GroupRouting.ShardBytes
                        ? w.targets().size() * nics
                        : w.targets().size();
        };
    }

    /** Posts every piece of {@code request} in order, stopping early when the poster abandons it. */
    void plan(final WriteRequest request, final Poster poster) {
        try {
            switch (request) {
                case SingleWrite w -> single(w, poster);
                case PagedWrite w -> paged(w, poster);
                case ImmWrite w ->
                    poster.post(
                            op.set(
                                    w.routing() instanceof Routing.Pinned pinned ? pinned.nic() : nextNics(1),
                                    null,
                                    0,
                                    0,
                                    w.dst(),
                                    0,
                                    true,
                                    w.value(),
                                    -1),
                            1);
                case BarrierWrite w -> barrier(w, poster);
                case ScatterWrite w -> scatter(w, poster);
            }
        } finally {
            op.clear();
        }
    }

    private void single(final SingleWrite w, final Poster poster) {
        final Region src = (Region) w.src();
        final int shards = pieces(w);
        final int first = w.routing() instanceof Routing.Pinned pinned ? pinned.nic() : nextNics(shards);
        final long shardSize = Sharding.shardSize(w.length(), shards);
        for (int j = 0; j < shards; j++) {
            final long offset = Sharding.shardOffset(w.length(), shardSize, j);
            if (!poster.post(
                    op.set(
                            (first + j) % nics,
                            src,
                            w.srcOffset() + offset,
                            Sharding.shardLength(w.length(), shardSize, j),
                            w.dst(),
                            w.dstOffset() + offset,
                            w.imm().isPresent(),
                            w.imm().orElse(0),
                            -1),
                    shards - j)) {
                return;
            }
        }
    }

    private void paged(final PagedWrite w, final Poster poster) {
        final int pages = w.pageCount();
        if (pages == 0) {
            return;
        }
        final Region src = (Region) w.src();
        final int rangeSize = Sharding.rangeSize(pages, nics);
        final int first = nextNics(Sharding.rangeCount(pages, nics));
        for (int k = 0; k < pages; k++) {
            if (!poster.post(
                    op.set(
                            (first + k / rangeSize) % nics,
                            src,
                            w.srcOffset() + w.srcStride() * w.srcPage(k),
                            w.pageLength(),
                            w.dst(),
                            w.dstOffset() + w.dstStride() * w.dstPage(k),
                            w.imm().isPresent(),
                            w.imm().orElse(0),
                            -1),
                    pages - k)) {
                return;
            }
        }
    }

    private void barrier(final BarrierWrite w, final Poster poster) {
        final List<RegionDescriptor> dsts = w.dsts();
        final int count = dsts.size();
        final int rangeSize;
        final int first;
        if (w.routing() instanceof Routing.Pinned pinned) {
            rangeSize = count;
            first = pinned.nic();
        } else {
            rangeSize = Sharding.rangeSize(count, nics);
            first = nextNics(Sharding.rangeCount(count, nics));
        }
        for (int i = 0; i < count; i++) {
            final int nic = (first + i / rangeSize) % nics;
            if (!poster.post(
                    op.set(nic, null, 0, 0, dsts.get(i), 0, true, w.value(), peerHandle(w.group(), i, nic)),
                    count - i)) {
                return;
            }
        }
    }

    private void scatter(final ScatterWrite w, final Poster poster) {
        final Region src = (Region) w.src();
        final List<ScatterTarget> targets = w.targets();
        final int count = targets.size();
        final boolean hasImm = w.imm().isPresent();
        final int imm = w.imm().orElse(0);
        if (w.routing() instanceof GroupRouting.ShardBytes) {
            for (int i = 0; i < count; i++) {
                final ScatterTarget t = targets.get(i);
                for (int nic = 0; nic < nics; nic++) {
                    final long offset = Sharding.byteSliceOffset(t.length(), nics, nic);
                    if (!poster.post(
                            op.set(
                                    nic,
                                    src,
                                    t.srcOffset() + offset,
                                    Sharding.byteSliceLength(t.length(), nics, nic),
                                    t.dst(),
                                    t.dstOffset() + offset,
                                    hasImm,
                                    imm,
                                    peerHandle(w.group(), i, nic)),
                            (count - i) * nics - nic)) {
                        return;
                    }
                }
            }
            return;
        }
        final int rangeSize = w.routing() instanceof GroupRouting.SingleNic ? count : Sharding.rangeSize(count, nics);
        final int first = w.routing() instanceof GroupRouting.SingleNic single ? single.nic() : 0;
        for (int i = 0; i < count; i++) {
            final ScatterTarget t = targets.get(i);
            final int nic = (first + i / rangeSize) % nics;
            if (!poster.post(
                    op.set(
                            nic,
                            src,
                            t.srcOffset(),
                            t.length(),
                            t.dst(),
                            t.dstOffset(),
                            hasImm,
                            imm,
                            peerHandle(w.group(), i, nic)),
                    count - i)) {
                return;
            }
        }
    }

    private static long peerHandle(final PeerGroup group, final int peer, final int nic) {
        return group instanceof ResolvedPeerGroup resolved ? resolved.handle(peer, nic) : -1;
    }

    private int nextNics(final int count) {
        final int first = roundRobin;
        roundRobin = (roundRobin + count) % nics;
        return first;
    }
}
