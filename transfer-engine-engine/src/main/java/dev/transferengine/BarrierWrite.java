package dev.transferengine;

import java.util.List;
import java.util.OptionalInt;

/**
 * A zero-byte imm write to each destination (one imm event each). With {@link Routing#sharded(int) sharded(1)}
 * the destinations are cut into contiguous chunks over the NICs; with {@link Routing#pinned(int)} all go through one
 * NIC. With a {@code group} the destinations must follow the group's peer order.
 */
public record BarrierWrite(List<MrDesc> dsts, int value, Routing routing, PeerGroup group) implements WriteRequest {

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

    public static BarrierWrite of(final List<MrDesc> dsts, final int imm) {
        return new BarrierWrite(dsts, imm, Routing.sharded(1), PeerGroup.NONE);
    }

    public BarrierWrite withGroup(final PeerGroup value) {
        return new BarrierWrite(dsts, this.value, routing, value);
    }

    public BarrierWrite withRouting(final Routing value) {
        return new BarrierWrite(dsts, this.value, value, group);
    }

    @Override
    public OptionalInt imm() {
        return OptionalInt.of(value);
    }
}
