package dev.transferengine;

import java.util.OptionalInt;

/**
 * Writes {@code length} bytes from {@code src + srcOffset} to {@code dst + dstOffset}.
 *
 * @param src       our registered region the bytes are read from
 * @param srcOffset byte offset into {@code src}
 * @param length    bytes to write; 0 is allowed (a zero-byte write, which still delivers its imm)
 * @param dst       the receiver's region, from its {@link MemoryRegion#descriptor()}
 * @param dstOffset byte offset into {@code dst}
 * @param routing {@link Routing#sharded(int)} splits it into shards of {@code roundUp(ceil(length/n), 8192)} bytes
 *                (zero-length shards are still posted, at offset 0); {@link Routing#pinned(int)} uses one NIC
 * @param imm       the imm delivered with each shard, or empty
 */
public record SingleWrite(
        MemoryRegion src,
        long srcOffset,
        long length,
        RegionDescriptor dst,
        long dstOffset,
        Routing routing,
        OptionalInt imm)
        implements WriteRequest {

    /**
     * Checks offsets and length; whether they fit the regions is checked at submission.
     *
     * @throws IllegalArgumentException if an offset or the length is negative
     */
    public SingleWrite {
        if (srcOffset < 0 || length < 0 || dstOffset < 0) {
            throw new IllegalArgumentException("offsets and length must be >= 0: srcOffset=" + srcOffset + " length="
                    + length + " dstOffset=" + dstOffset);
        }
    }

    /**
     * A write of {@code length} bytes without imm, in one shard ({@link Routing#sharded(int) sharded(1)}).
     *
     * @param src our region the bytes are read from
     * @param srcOffset byte offset into {@code src}
     * @param length bytes to write
     * @param dst the receiver's region
     * @param dstOffset byte offset into {@code dst}
     * @return the request, reusable for any number of submissions
     * @throws IllegalArgumentException if an offset or the length is negative
     */
    public static SingleWrite of(
            final MemoryRegion src,
            final long srcOffset,
            final long length,
            final RegionDescriptor dst,
            final long dstOffset) {
        return new SingleWrite(src, srcOffset, length, dst, dstOffset, Routing.sharded(1), OptionalInt.empty());
    }

    /**
     * This write, delivering an imm with each shard.
     *
     * @param value the 32-bit imm
     * @return a new request; this one is unchanged
     */
    public SingleWrite withImm(final int value) {
        return new SingleWrite(src, srcOffset, length, dst, dstOffset, routing, OptionalInt.of(value));
    }

    /**
     * This write, spread over the NICs another way.
     *
     * @param value the new routing
     * @return a new request; this one is unchanged
     */
    public SingleWrite withRouting(final Routing value) {
        return new SingleWrite(src, srcOffset, length, dst, dstOffset, value, imm);
    }
}
