package dev.transferengine.moe;

/**
 * The size of one MoE layer's exchange.
 *
 * @param tokens tokens per dispatcher per layer (T), >= 1
 * @param hidden hidden size (H), bf16 elements per token, >= 1
 * @param topK experts each token goes to (k), 1..experts
 * @param experts experts in total (X), a multiple of {@code expertRanks}
 * @param expertRanks expert ranks (E), each owning {@code experts / expertRanks} consecutive experts, >= 1
 * @param dispatchers dispatcher ranks, one per data-parallel group, >= 1
 */
public record MoeShape(int tokens, int hidden, int topK, int experts, int expertRanks, int dispatchers) {

    /** Bytes of one header int. */
    private static final int INT_BYTES = Integer.BYTES;

    /**
     * Checks the shape.
     *
     * @throws IllegalArgumentException naming the first value out of range
     */
    public MoeShape {
        if (tokens < 1 || hidden < 1 || expertRanks < 1 || dispatchers < 1) {
            throw new IllegalArgumentException("tokens, hidden, expertRanks and dispatchers must be >= 1, was T="
                    + tokens + " H=" + hidden + " E=" + expertRanks + " D=" + dispatchers);
        }
        if (experts < expertRanks || experts % expertRanks != 0) {
            throw new IllegalArgumentException(
                    "experts (" + experts + ") must be a positive multiple of expertRanks (" + expertRanks + ")");
        }
        if (topK < 1 || topK > experts) {
            throw new IllegalArgumentException("topK must be 1.." + experts + ", was " + topK);
        }
        if (dispatchers + expertRanks > 0x10000) {
            throw new IllegalArgumentException("at most 65536 ranks, was " + (dispatchers + expertRanks));
        }
        if ((long) tokens * topK * hidden * 2 * expertRanks > Integer.MAX_VALUE * 4L) {
            throw new IllegalArgumentException("the padded buffers of this shape exceed 8 GiB");
        }
    }

    /**
     * Experts each rank owns.
     *
     * @return {@code experts / expertRanks}
     */
    public int expertsPerRank() {
        return experts / expertRanks;
    }

    /**
     * The rank that owns an expert.
     *
     * @param expert the expert, 0..experts-1
     * @return its expert rank
     */
    public int rankOf(final int expert) {
        return expert / expertsPerRank();
    }

    /**
     * Bytes of one token row.
     *
     * @return {@code hidden * 2}
     */
    public long rowBytes() {
        return hidden * 2L;
    }

    /**
     * The most rows one dispatcher can route to one expert rank: every token to {@code min(k, experts per rank)} of its
     * experts. Receive slots are this big; the padded exchange always sends this many.
     *
     * @return {@code tokens * min(topK, expertsPerRank)}
     */
    public int maxRowsPerRank() {
        return tokens * Math.min(topK, expertsPerRank());
    }

    /**
     * Bytes of a slot's header: the row count, then the count per local expert, rounded up to 64.
     *
     * @return the header size
     */
    public long headerBytes() {
        return (INT_BYTES * (1L + expertsPerRank()) + 63) & ~63L;
    }

    /**
     * Bytes of the rows of one slot.
     *
     * @return {@code maxRowsPerRank * rowBytes}
     */
    public long slotRowBytes() {
        return maxRowsPerRank() * rowBytes();
    }

    /**
     * Bytes of one slot: header then rows.
     *
     * @return {@code headerBytes + slotRowBytes}
     */
    public long slotBytes() {
        return headerBytes() + slotRowBytes();
    }
}
