package dev.transferengine;

/**
 * Reads {@code length} bytes from the peer's region {@code src + srcOffset} into our region {@code dst + dstOffset}.
 * Carries no imm (see {@link ReadRequest}).
 *
 * @param src       the peer's region, from its {@link MemoryRegion#descriptor()}; it must allow reads
 * @param srcOffset byte offset into {@code src}
 * @param length    bytes to read; 0 is allowed (the read then only checks that the peer answers)
 * @param dst       our registered region the bytes land in
 * @param dstOffset byte offset into {@code dst}
 * @param routing   {@link Routing#sharded(int)} splits it into shards of {@code roundUp(ceil(length/n), 8192)} bytes,
 *                  as for a {@link SingleWrite}; {@link Routing#pinned(int)} uses one NIC
 */
public record SingleRead(
        RegionDescriptor src, long srcOffset, long length, MemoryRegion dst, long dstOffset, Routing routing)
        implements ReadRequest {

    /**
     * Checks offsets and length; whether they fit the regions is checked at submission.
     *
     * @throws IllegalArgumentException if an offset or the length is negative
     */
    public SingleRead {
        if (srcOffset < 0 || length < 0 || dstOffset < 0) {
            throw new IllegalArgumentException("offsets and length must be >= 0: srcOffset=" + srcOffset + " length="
                    + length + " dstOffset=" + dstOffset);
        }
    }

    /**
     * A read of {@code length} bytes in one shard ({@link Routing#sharded(int) sharded(1)}).
     *
     * @param src the peer's region
     * @param srcOffset byte offset into {@code src}
     * @param length bytes to read
     * @param dst our region the bytes land in
     * @param dstOffset byte offset into {@code dst}
     * @return the request, reusable for any number of submissions
     * @throws IllegalArgumentException if an offset or the length is negative
     */
    public static SingleRead of(
            final RegionDescriptor src,
            final long srcOffset,
            final long length,
            final MemoryRegion dst,
            final long dstOffset) {
        return new SingleRead(src, srcOffset, length, dst, dstOffset, Routing.sharded(1));
    }

    /**
     * This read, spread over the NICs another way.
     *
     * @param value the new routing
     * @return a new request; this one is unchanged
     */
    public SingleRead withRouting(final Routing value) {
        return new SingleRead(src, srcOffset, length, dst, dstOffset, value);
    }
}
