package dev.transferengine;

import java.util.List;
import java.util.OptionalInt;

/**
 * Writes from one source region to many targets. With a {@code group} (see
 * {@link TransferEngine#addPeerGroup(List)}) the targets must be in the group's peer order and count, and the
 * peers were resolved once; with {@link PeerGroup#NONE} they are resolved per call.
 */
public record ScatterWrite(
        MemoryRegion src, List<ScatterTarget> targets, GroupRouting routing, PeerGroup group, OptionalInt imm)
        implements WriteRequest {

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

    public static ScatterWrite of(final MemoryRegion src, final List<ScatterTarget> targets) {
        return new ScatterWrite(src, targets, GroupRouting.shardPeers(), PeerGroup.NONE, OptionalInt.empty());
    }

    public ScatterWrite withImm(final int value) {
        return new ScatterWrite(src, targets, routing, group, OptionalInt.of(value));
    }

    public ScatterWrite withRouting(final GroupRouting value) {
        return new ScatterWrite(src, targets, value, group, imm);
    }

    public ScatterWrite withGroup(final PeerGroup value) {
        return new ScatterWrite(src, targets, routing, value, imm);
    }
}
