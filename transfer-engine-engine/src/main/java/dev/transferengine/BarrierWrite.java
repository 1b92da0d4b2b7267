package dev.transferengine;

import java.util.List;
import java.util.OptionalInt;

/**
 * A zero-byte imm write to each destination (one imm event each). With {@link Routing#sharded(int) sharded(1)}
 * the destinations are cut into contiguous chunks over the NICs; with {@link Routing#pinned(int)} all go through one
 * NIC. With a {@code group} the destinations must follow the group's peer order.
 *
 * @param dsts    the receivers' regions, one per peer, at least one (copied); no byte of them is written
 * @param value   the 32-bit imm each destination receives
 * @param routing {@link Routing#sharded(int) sharded(1)} or {@link Routing#pinned(int) pinned(nic)}
 * @param group   the peer group the destinations follow, or {@link PeerGroup#NONE}
 */
public record BarrierWrite(List<RegionDescriptor> dsts, int value, Routing routing, PeerGroup group)
        implements WriteRequest {

    /**
     * Checks the destinations and routing against the group and copies the list.
     *
     * @throws IllegalArgumentException if there is no destination, the routing shards over more than one piece, or a
     *     peer group has a different number of peers
     */
    public BarrierWrite {
        if (dsts.isEmpty()) {
            throw new IllegalArgumentException("a barrier needs at least one destination");
        }
        if (routing instanceof Routing.Sharded s && s.shards() != 1) {
            throw new IllegalArgumentException(
                    "a barrier takes sharded(1) or pinned(nic), not sharded(" + s.shards() + ")");
        }
        dsts = List.copyOf(dsts);
        if (!PeerGroup.NONE.equals(group) && group.size() != dsts.size()) {
            throw new IllegalArgumentException(
                    "peer group has " + group.size() + " peers but the barrier names " + dsts.size());
        }
    }

    /**
     * A barrier over the NICs in contiguous chunks, peers resolved per call.
     *
     * @param dsts the receivers' regions, at least one (copied)
     * @param imm the 32-bit imm each destination receives
     * @return the request, reusable for any number of submissions
     * @throws IllegalArgumentException if there is no destination
     */
    public static BarrierWrite of(final List<RegionDescriptor> dsts, final int imm) {
        return new BarrierWrite(dsts, imm, Routing.sharded(1), PeerGroup.NONE);
    }

    /**
     * This barrier to a resolved peer group, whose peers need no lookup per call.
     *
     * @param value the group, its peers in the order of the destinations, or {@link PeerGroup#NONE}
     * @return a new request; this one is unchanged
     * @throws IllegalArgumentException if the group has a different number of peers than there are destinations
     */
    public BarrierWrite withGroup(final PeerGroup value) {
        return new BarrierWrite(dsts, this.value, routing, value);
    }

    /**
     * This barrier, sent over the NICs another way.
     *
     * @param value {@link Routing#sharded(int) sharded(1)} or {@link Routing#pinned(int) pinned(nic)}
     * @return a new request; this one is unchanged
     * @throws IllegalArgumentException if {@code value} shards over more than one piece
     */
    public BarrierWrite withRouting(final Routing value) {
        return new BarrierWrite(dsts, this.value, value, group);
    }

    @Override
    public OptionalInt imm() {
        return OptionalInt.of(value);
    }
}
