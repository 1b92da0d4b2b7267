package dev.transferengine.moe;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** The combine arithmetic shared by the dispatcher and the reference, so that both produce the same bytes. */
final class Combine {

    private static final ValueLayout.OfShort BF16 = ValueLayout.JAVA_SHORT_UNALIGNED;

    private Combine() {}

    /** {@code sum += weight * row}, the row bf16 at {@code offset}. */
    static void accumulate(final float[] sum, final float weight, final MemorySegment row, final long offset) {
        for (int h = 0; h < sum.length; h++) {
            sum[h] += weight * Bf16.toFloat(row.get(BF16, offset + 2L * h));
        }
    }

    /** Stores {@code sum} as a bf16 row at {@code offset}. */
    static void store(final float[] sum, final MemorySegment out, final long offset) {
        for (int h = 0; h < sum.length; h++) {
            out.set(BF16, offset + 2L * h, Bf16.fromFloat(sum[h]));
        }
    }
}
