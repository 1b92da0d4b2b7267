package dev.transferengine.core;

/**
 * The rules that spread one request over the NICs of a group. Pure arithmetic, shared by every transport, so the
 * receiver's imm counts are the same everywhere.
 */
final class Sharding {

    /** Single writes are cut at multiples of this, so shards stay page friendly. */
    static final long SHARD_GRANULARITY = 8192;

    private Sharding() {}

    /**
     * Bytes per shard of a single write: {@code roundUp(ceil(length / shards), 8192)}. (The reference floors the
     * division, which can lose the last bytes; rounding up first never does.)
     */
    static long shardSize(final long length, final int shards) {
        final long perShard = ceilDiv(length, shards);
        return ceilDiv(perShard, SHARD_GRANULARITY) * SHARD_GRANULARITY;
    }

    /** Offset of shard {@code j} within the write; shards past the end are zero-length at offset 0. */
    static long shardOffset(final long length, final long shardSize, final int j) {
        final long offset = shardSize * j;
        return offset < length ? offset : 0;
    }

    /** Length of shard {@code j}; 0 once the bytes ran out. */
    static long shardLength(final long length, final long shardSize, final int j) {
        final long offset = shardSize * j;
        return offset < length ? Math.min(shardSize, length - offset) : 0;
    }

    /** Size of the contiguous ranges that cut {@code items} over at most {@code parts} NICs. */
    static int rangeSize(final int items, final int parts) {
        return Math.max(1, (int) ceilDiv(items, parts));
    }

    /** Number of non-empty ranges of {@link #rangeSize(int, int)}; fewer than {@code parts} when items are few. */
    static int rangeCount(final int items, final int parts) {
        return items == 0 ? 0 : (int) ceilDiv(items, rangeSize(items, parts));
    }

    /** Offset of NIC {@code nic}'s slice of a shard-bytes scatter target. */
    static long byteSliceOffset(final long length, final int nics, final int nic) {
        return length / nics * nic;
    }

    /** Length of NIC {@code nic}'s slice; the last NIC also carries the remainder (the reference drops it). */
    static long byteSliceLength(final long length, final int nics, final int nic) {
        final long slice = length / nics;
        return nic == nics - 1 ? length - slice * (nics - 1) : slice;
    }

    static long ceilDiv(final long a, final long b) {
        return (a + b - 1) / b;
    }
}
