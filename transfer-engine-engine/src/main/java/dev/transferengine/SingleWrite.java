package dev.transferengine;

import java.util.OptionalInt;

/**
 * Writes {@code length} bytes from {@code src + srcOffset} to {@code dst + dstOffset}.
 *
 * @param routing {@link Routing#sharded(int)} splits it into shards of {@code roundUp(ceil(length/n), 8192)} bytes
 *                (zero-length shards are still posted, at offset 0); {@link Routing#pinned(int)} uses one NIC
 */
public record SingleWrite(
        MemoryRegion src, long srcOffset, long length, MrDesc dst, long dstOffset, Routing routing, OptionalInt imm)
        implements WriteRequest {

    public SingleWrite {
        if (srcOffset < 0 || length < 0 || dstOffset < 0) {
            throw new IllegalArgumentException("offsets and length must be >= 0: srcOffset=" + srcOffset + " length="
                    + length + " dstOffset=" + dstOffset);
        }
    }

    /** A write of {@code length} bytes without imm, sharded over one NIC. */
    public static SingleWrite of(
            final MemoryRegion src, final long srcOffset, final long length, final MrDesc dst, final long dstOffset) {
        return new SingleWrite(src, srcOffset, length, dst, dstOffset, Routing.sharded(1), OptionalInt.empty());
    }

    public SingleWrite withImm(final int value) {
        return new SingleWrite(src, srcOffset, length, dst, dstOffset, routing, OptionalInt.of(value));
    }

    public SingleWrite withRouting(final Routing value) {
        return new SingleWrite(src, srcOffset, length, dst, dstOffset, value, imm);
    }
}
