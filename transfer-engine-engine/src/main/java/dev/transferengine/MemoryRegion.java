package dev.transferengine;

import java.lang.foreign.MemorySegment;

/**
 * The local handle of a registered region (the paper's {@code MrHandle}). Share its {@link #descriptor()} with
 * peers so they can write into it; use it as the source of writes.
 */
public interface MemoryRegion {

    /** The registered memory. For device memory the segment carries the device pointer and is not host-readable. */
    MemorySegment segment();

    Device device();

    /** Index of the group (worker) that registered the region on each of its NICs. */
    int group();

    /** The serialisable descriptor peers write to. */
    MrDesc descriptor();

    default long length() {
        return segment().byteSize();
    }

    /** False once {@link TransferEngine#deregister(MemoryRegion)} ran. */
    boolean isRegistered();
}
