package dev.transferengine.core;

import dev.transferengine.RegionDescriptor;

import org.jspecify.annotations.Nullable;

/**
 * One per-NIC piece of a request, as the {@link WritePlanner} lays it out and the group posts it. One instance is
 * reused for every piece, so planning allocates nothing; it is read synchronously, never kept. Worker thread.
 */
final class WriteOp {

    /** The NIC of the group, and of the destination, the piece goes through. */
    int nic;
    /** The local region the bytes come from; null for an imm-only piece. */
    @Nullable Region src;

    long srcOffset;
    long length;

    @Nullable RegionDescriptor dst;

    long dstOffset;
    boolean hasImm;
    int imm;
    /** The peer handle resolved ahead (a peer group), or -1 to resolve the destination's address. */
    long peer;

    WriteOp set(
            final int onNic,
            final @Nullable Region from,
            final long fromOffset,
            final long bytes,
            final RegionDescriptor to,
            final long toOffset,
            final boolean withImm,
            final int immValue,
            final long resolvedPeer) {
        nic = onNic;
        src = from;
        srcOffset = fromOffset;
        length = bytes;
        dst = to;
        dstOffset = toOffset;
        hasImm = withImm;
        imm = immValue;
        peer = resolvedPeer;
        return this;
    }

    /** Drops the references to user objects once the piece is posted. */
    void clear() {
        src = null;
        dst = null;
    }
}
