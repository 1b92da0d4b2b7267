package dev.transferengine.moe;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * The weights of a consecutive range of experts and their computation, a real low-rank matmul on the CPU: for a bf16
 * row {@code x} of hidden size H, {@code y = bf16((x A) B)} with {@code A} H x R and {@code B} R x H in float. Weights
 * come from a seed, so every process derives the same ones; float arithmetic is IEEE in Java, so every process computes
 * the same bytes. Immutable; any thread.
 */
public final class ExpertWeights {

    private static final ValueLayout.OfShort BF16 = ValueLayout.JAVA_SHORT_UNALIGNED;

    private final int first;
    private final int hidden;
    private final int width;
    private final float[][] down;
    private final float[][] up;

    /**
     * Derives the weights of experts {@code first .. first+count-1}.
     *
     * @param seed the model's seed
     * @param hidden hidden size H, >= 1
     * @param width the inner width R, >= 1
     * @param first the first expert
     * @param count how many experts, >= 0
     * @throws IllegalArgumentException if a size is out of range
     */
    public ExpertWeights(final long seed, final int hidden, final int width, final int first, final int count) {
        if (hidden < 1 || width < 1 || first < 0 || count < 0) {
            throw new IllegalArgumentException("hidden and width must be >= 1, first and count >= 0: H=" + hidden
                    + " R=" + width + " first=" + first + " count=" + count);
        }
        this.first = first;
        this.hidden = hidden;
        this.width = width;
        this.down = new float[count][];
        this.up = new float[count][];
        final float scale = (float) (1.0 / Math.sqrt(hidden));
        for (int e = 0; e < count; e++) {
            final SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + first + e + 1);
            down[e] = new float[hidden * width];
            up[e] = new float[width * hidden];
            for (int i = 0; i < down[e].length; i++) {
                down[e][i] = (float) (random.nextDouble(-1, 1) * scale);
            }
            for (int i = 0; i < up[e].length; i++) {
                up[e][i] = (float) random.nextDouble(-1, 1);
            }
        }
    }

    /**
     * Whether this holds an expert's weights.
     *
     * @param expert the expert
     * @return true if it is in range
     */
    public boolean holds(final int expert) {
        return expert >= first && expert < first + down.length;
    }

    /**
     * Computes one expert on one row. Any thread; allocates a small scratch array.
     *
     * @param expert the expert, one this holds
     * @param in the segment holding the bf16 input row
     * @param inOffset byte offset of the row in {@code in}
     * @param out the segment to write the bf16 output row to
     * @param outOffset byte offset of the row in {@code out}
     * @throws IllegalArgumentException if this does not hold {@code expert}
     */
    public void apply(
            final int expert,
            final MemorySegment in,
            final long inOffset,
            final MemorySegment out,
            final long outOffset) {
        if (!holds(expert)) {
            throw new IllegalArgumentException(
                    "expert " + expert + " is not among experts " + first + ".." + (first + down.length - 1));
        }
        final float[] a = down[expert - first];
        final float[] b = up[expert - first];
        final float[] inner = new float[width];
        for (int i = 0; i < hidden; i++) {
            final float x = Bf16.toFloat(in.get(BF16, inOffset + 2L * i));
            for (int r = 0; r < width; r++) {
                inner[r] += x * a[i * width + r];
            }
        }
        for (int h = 0; h < hidden; h++) {
            float y = 0f;
            for (int r = 0; r < width; r++) {
                y += inner[r] * b[r * hidden + h];
            }
            out.set(BF16, outOffset + 2L * h, Bf16.fromFloat(y));
        }
    }
}
