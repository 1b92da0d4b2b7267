package dev.transferengine;

import java.util.List;

/**
 * Reads from many peers' regions into one of ours (a gather, shaped like a {@link ScatterWrite} the other way round).
 * With a {@code group} (see {@link TransferEngine#addPeerGroup(List)}) the sources must be in the group's peer order
 * and count, and the peers were resolved once; with {@link PeerGroup#NONE} they are resolved per call. Carries no imm
 * (see {@link ReadRequest}).
 *
 * @param dst     our registered region every source's bytes land in
 * @param sources the sources, at least one (copied)
 * @param routing how the sources are spread over our NICs: one read per source ({@link GroupRouting#shardPeers()},
 *                {@link GroupRouting#singleNic(int)}) or one per NIC per source ({@link GroupRouting#shardBytes()})
 * @param group   the peer group the sources follow, or {@link PeerGroup#NONE}
 */
public record ScatterRead(MemoryRegion dst, List<ReadSource> sources, GroupRouting routing, PeerGroup group)
        implements ReadRequest {

    /**
     * Checks the sources against the group and copies the list.
     *
     * @throws IllegalArgumentException if there is no source, or a peer group has a different number of peers
     */
    public ScatterRead {
        if (sources.isEmpty()) {
            throw new IllegalArgumentException("a scatter read needs at least one source");
        }
        sources = List.copyOf(sources);
        if (!PeerGroup.NONE.equals(group) && group.size() != sources.size()) {
            throw new IllegalArgumentException("peer group has " + group.size() + " peers but the scatter read names "
                    + sources.size() + " sources");
        }
    }

    /**
     * A scatter read with its sources in ranges over the NICs, peers resolved per call.
     *
     * @param dst our region the bytes land in
     * @param sources the sources, at least one (copied)
     * @return the request, reusable for any number of submissions
     * @throws IllegalArgumentException if there is no source
     */
    public static ScatterRead of(final MemoryRegion dst, final List<ReadSource> sources) {
        return new ScatterRead(dst, sources, GroupRouting.shardPeers(), PeerGroup.NONE);
    }

    /**
     * This scatter read, spread over the NICs another way.
     *
     * @param value the new routing
     * @return a new request; this one is unchanged
     */
    public ScatterRead withRouting(final GroupRouting value) {
        return new ScatterRead(dst, sources, value, group);
    }

    /**
     * This scatter read from a resolved peer group, whose peers need no lookup per call.
     *
     * @param value the group, its peers in the order of the sources, or {@link PeerGroup#NONE}
     * @return a new request; this one is unchanged
     * @throws IllegalArgumentException if the group has a different number of peers than there are sources
     */
    public ScatterRead withGroup(final PeerGroup value) {
        return new ScatterRead(dst, sources, routing, value);
    }
}
