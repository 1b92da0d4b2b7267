package dev.transferengine.moe;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * The weights of a consecutive range of experts and their computation, a real low-rank matmul on the CPU: for a bf16
 * row {@code x} of hidden size H, {@code y = bf16((x A) B)} with {@code A} H x R and {@code B} R x H in float. Weights
 * come from a seed, so every process derives the same ones; float arithmetic is IEEE in Java, so every process computes
 * the same bytes.
 *
 * <p>The order of the sums is the GPU kernel's ({@code moe_expert} in {@code moe-kernels.cu}, run by {@link
 * MoeGpuExperts}), so that the GPU computes these bytes too: each of {@value #LANES} lanes sums {@code x[i] A[i][r]}
 * over {@code i = lane, lane + LANES, ...} in order, the lanes' sums are added as a tree (lane {@code l} takes lane
 * {@code l + s} for {@code s = LANES/2 .. 1}), and each output is {@code sum over r} in order. Immutable; any thread.
 */
public final class ExpertWeights implements ExpertCompute {

    /** The lanes of the inner product: the GPU kernel's threads per row. */
    static final int LANES = 256;

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
    @Override
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
        final float[] partial = new float[LANES * width];
        for (int i = 0; i < hidden; i++) {
            final float x = Bf16.toFloat(in.get(BF16, inOffset + 2L * i));
            final int lane = (i % LANES) * width;
            for (int r = 0; r < width; r++) {
                partial[lane + r] += x * a[i * width + r];
            }
        }
        for (int s = LANES / 2; s > 0; s >>= 1) {
            for (int lane = 0; lane < s; lane++) {
                for (int r = 0; r < width; r++) {
                    partial[lane * width + r] += partial[(lane + s) * width + r];
                }
            }
        }
        for (int h = 0; h < hidden; h++) {
            float y = 0f;
            for (int r = 0; r < width; r++) {
                y += partial[r] * b[r * hidden + h];
            }
            out.set(BF16, outOffset + 2L * h, Bf16.fromFloat(y));
        }
    }

    /**
     * Computes consecutive experts on consecutive rows, one row at a time on the calling thread.
     *
     * @throws IllegalArgumentException if this does not hold one of the experts
     */
    @Override
    public void compute(
            final int firstExpert,
            final int[] counts,
            final MemorySegment in,
            final long inOffset,
            final MemorySegment out,
            final long outOffset) {
        final long rowBytes = hidden * 2L;
        long row = 0;
        for (int le = 0; le < counts.length; le++) {
            for (int i = 0; i < counts[le]; i++, row++) {
                apply(firstExpert + le, in, inOffset + row * rowBytes, out, outOffset + row * rowBytes);
            }
        }
    }

    /** Hidden size H. */
    int hidden() {
        return hidden;
    }

    /** Inner width R. */
    int width() {
        return width;
    }

    /** The first expert this holds. */
    int first() {
        return first;
    }

    /** How many experts this holds. */
    int count() {
        return down.length;
    }

    /** Expert {@code first() + local}'s A, H x R row-major (shared, not copied: callers only read it). */
    float[] down(final int local) {
        return down[local];
    }

    /** Expert {@code first() + local}'s B, R x H row-major (shared, not copied: callers only read it). */
    float[] up(final int local) {
        return up[local];
    }
}
