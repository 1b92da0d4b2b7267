package dev.transferengine;

import java.util.List;
import java.util.OptionalInt;

/**
 * Writes from one source region to many targets. With a {@code group} (see
 * {@link TransferEngine#addPeerGroup(List)}) the targets must be in the group's peer order and count, and the
 * peers were resolved once; with {@link PeerGroup#NONE} they are resolved per call.
 *
 * @param src     our registered region every target's bytes are read from
 * @param targets the destinations, at least one (copied)
 * @param routing how the targets are spread over our NICs
 * @param group   the peer group the targets follow, or {@link PeerGroup#NONE}
 * @param imm     the imm delivered with each write, or empty
 */
public record ScatterWrite(
        MemoryRegion src, List<ScatterTarget> targets, GroupRouting routing, PeerGroup group, OptionalInt imm)
        implements WriteRequest {

    /**
     * Checks the targets against the group and copies the list.
     *
     * @throws IllegalArgumentException if there is no target, or a peer group has a different number of peers
     */
    public ScatterWrite {
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("a scatter needs at least one target");
        }
        targets = List.copyOf(targets);
        if (!PeerGroup.NONE.equals(group) && group.size() != targets.size()) {
            throw new IllegalArgumentException(
                    "peer group has " + group.size() + " peers but the scatter names " + targets.size() + " targets");
        }
    }

    /**
     * A scatter without imm, its targets in ranges over the NICs, peers resolved per call.
     *
     * @param src our region the bytes are read from
     * @param targets the destinations, at least one (copied)
     * @return the request, reusable for any number of submissions
     * @throws IllegalArgumentException if there is no target
     */
    public static ScatterWrite of(final MemoryRegion src, final List<ScatterTarget> targets) {
        return new ScatterWrite(src, targets, GroupRouting.shardPeers(), PeerGroup.NONE, OptionalInt.empty());
    }

    /**
     * This scatter, delivering an imm with each write.
     *
     * @param value the 32-bit imm
     * @return a new request; this one is unchanged
     */
    public ScatterWrite withImm(final int value) {
        return new ScatterWrite(src, targets, routing, group, OptionalInt.of(value));
    }

    /**
     * This scatter, spread over the NICs another way.
     *
     * @param value the new routing
     * @return a new request; this one is unchanged
     */
    public ScatterWrite withRouting(final GroupRouting value) {
        return new ScatterWrite(src, targets, value, group, imm);
    }

    /**
     * This scatter to a resolved peer group, whose peers need no lookup per call.
     *
     * @param value the group, its peers in the order of the targets, or {@link PeerGroup#NONE}
     * @return a new request; this one is unchanged
     * @throws IllegalArgumentException if the group has a different number of peers than there are targets
     */
    public ScatterWrite withGroup(final PeerGroup value) {
        return new ScatterWrite(src, targets, routing, value, imm);
    }
}
