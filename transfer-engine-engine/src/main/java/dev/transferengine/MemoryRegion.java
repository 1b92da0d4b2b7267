package dev.transferengine;

import dev.transferengine.exceptions.InvalidRequestException;

import java.lang.foreign.MemorySegment;

/**
 * The local handle of a registered region (the paper's {@code MrHandle}). Share its {@link #descriptor()} with
 * peers so they can write into it or read from it, as its {@link #access()} allows; use it as the source of writes
 * and the destination of reads.
 */
public interface MemoryRegion {

    /**
     * The registered memory. For device memory the segment carries the device pointer and is not host-readable.
     *
     * @return the segment given to {@link TransferEngine#register(MemorySegment, Device)}
     */
    MemorySegment segment();

    /**
     * Where the memory lives.
     *
     * @return the host, or the CUDA device whose pointer {@link #segment()} carries
     */
    Device device();

    /**
     * Which group registered the region; writes from it run on that group's worker.
     *
     * @return the index of the group (worker) that registered the region on each of its NICs
     */
    int group();

    /**
     * The descriptor peers write to; it changes when the region is {@link #rekey() rekeyed}.
     *
     * @return the serialisable descriptor with the current keys
     */
    RegionDescriptor descriptor();

    /**
     * What peers may do with the region, as registered; its {@link #descriptor()} carries it too.
     *
     * @return the access the region was registered with, {@link RegionAccess#READ_WRITE} by default
     */
    default RegionAccess access() {
        return descriptor().access();
    }

    /**
     * The size of the registered memory.
     *
     * @return the region's length in bytes
     */
    default long length() {
        return segment().byteSize();
    }

    /**
     * Whether the region still accepts writes and may be the source of writes.
     *
     * @return false once {@link TransferEngine#deregister(MemoryRegion)} ran
     */
    boolean isRegistered();

    /**
     * Registers this memory under fresh keys on every NIC and drops the old keys, like invalidating an RDMA memory
     * window: from the moment this returns, a write that carries an old key is refused by this engine and leaves
     * the memory untouched, even one a peer sent long ago. Use it to fence an abandoned transfer before handing the
     * memory to someone else; then share the returned descriptor. Writes this side has in flight from the region
     * should have ended first. Blocks until every NIC switched.
     *
     * @return the descriptor with the new keys, also {@link #descriptor()} from now on
     * @throws InvalidRequestException if the region was deregistered
     */
    RegionDescriptor rekey();
}
