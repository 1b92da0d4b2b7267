package dev.transferengine.moe;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * One MoE layer's model, derived from a seed: the linear gate (H x X), the experts' weights ({@link ExpertWeights}),
 * the dispatchers' input tokens, and the single-process reference computation that every exchange is checked against.
 * Every process that builds a model from the same shape, seed and width gets the same bytes. Immutable; any thread.
 */
public final class MoeModel {

    private static final ValueLayout.OfShort BF16 = ValueLayout.JAVA_SHORT_UNALIGNED;

    private final MoeShape shape;
    private final long seed;
    private final int width;
    private final float[] gate;

    /**
     * Derives the gate of a model; expert weights are derived on demand by {@link #experts(int, int)}.
     *
     * @param shape the layer's shape
     * @param seed the seed every rank shares
     * @param width the experts' inner width R, >= 1 (small: this runs on the CPU)
     * @throws IllegalArgumentException if {@code width} is less than 1
     */
    public MoeModel(final MoeShape shape, final long seed, final int width) {
        if (width < 1) {
            throw new IllegalArgumentException("expert width must be >= 1, was " + width);
        }
        this.shape = shape;
        this.seed = seed;
        this.width = width;
        this.gate = new float[shape.hidden() * shape.experts()];
        final SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < gate.length; i++) {
            gate[i] = (float) random.nextDouble(-1, 1);
        }
    }

    /**
     * The layer's shape.
     *
     * @return the shape
     */
    public MoeShape shape() {
        return shape;
    }

    /** The gate, H x X floats row-major (shared, not copied: callers only read it). */
    float[] gate() {
        return gate;
    }

    /**
     * The weights of experts {@code first .. first+count-1}.
     *
     * @param first the first expert
     * @param count how many
     * @return their weights (allocates them)
     */
    public ExpertWeights experts(final int first, final int count) {
        return new ExpertWeights(seed, shape.hidden(), width, first, count);
    }

    /**
     * The weights of the experts an expert rank owns.
     *
     * @param expertRank the rank, 0..E-1
     * @return their weights (allocates them)
     * @throws IllegalArgumentException if the rank is out of range
     */
    public ExpertWeights expertsOfRank(final int expertRank) {
        if (expertRank < 0 || expertRank >= shape.expertRanks()) {
            throw new IllegalArgumentException(
                    "expert rank " + expertRank + " is not in 0.." + (shape.expertRanks() - 1));
        }
        return experts(expertRank * shape.expertsPerRank(), shape.expertsPerRank());
    }

    /**
     * Fills a dispatcher's input for a layer: T x H bf16 values in [-1, 1) derived from the seed.
     *
     * @param dispatcher the dispatcher
     * @param layer the layer
     * @param tokens at least {@code T * H * 2} bytes, written from offset 0
     */
    public void fillTokens(final int dispatcher, final int layer, final MemorySegment tokens) {
        final SplittableRandom random = new SplittableRandom(seed ^ (((long) dispatcher << 32) | layer));
        final long count = (long) shape.tokens() * shape.hidden();
        for (long i = 0; i < count; i++) {
            tokens.set(BF16, 2 * i, Bf16.fromFloat((float) random.nextDouble(-1, 1)));
        }
    }

    /**
     * The gate: logits {@code x G} per token, the top-k experts by logit (ties to the lower expert) and their softmax
     * weights. Any thread; allocates the routing.
     *
     * @param tokens T x H bf16 from offset 0
     * @return where each token goes
     */
    public TokenRouting route(final MemorySegment tokens) {
        final int t = shape.tokens();
        final int h = shape.hidden();
        final int x = shape.experts();
        final int k = shape.topK();
        final int[] experts = new int[t * k];
        final float[] weights = new float[t * k];
        final float[] logits = new float[x];
        final boolean[] taken = new boolean[x];
        for (int token = 0; token < t; token++) {
            java.util.Arrays.fill(logits, 0f);
            java.util.Arrays.fill(taken, false);
            for (int i = 0; i < h; i++) {
                final float value = Bf16.toFloat(tokens.get(BF16, 2L * ((long) token * h + i)));
                final int row = i * x;
                for (int e = 0; e < x; e++) {
                    logits[e] += value * gate[row + e];
                }
            }
            float sum = 0f;
            for (int j = 0; j < k; j++) {
                int best = -1;
                for (int e = 0; e < x; e++) {
                    if (!taken[e] && (best < 0 || logits[e] > logits[best])) {
                        best = e;
                    }
                }
                taken[best] = true;
                experts[token * k + j] = best;
                // StrictMath: the same bits in every process, interpreted or compiled
                weights[token * k + j] = (float) StrictMath.exp(logits[best] - logits[experts[token * k]]);
                sum += weights[token * k + j];
            }
            for (int j = 0; j < k; j++) {
                weights[token * k + j] /= sum;
            }
        }
        return new TokenRouting(t, k, experts, weights);
    }

    /**
     * The single-process reference: for each token, the sum over its slots of weight times the expert's bf16 output,
     * accumulated in float in slot order and rounded to bf16, the same arithmetic the dispatcher does on combine. Any
     * thread; allocates the expert weights of the whole model.
     *
     * @param tokens T x H bf16 from offset 0
     * @param routing the routing of {@code tokens}
     * @param out T x H bf16, written from offset 0
     */
    public void reference(final MemorySegment tokens, final TokenRouting routing, final MemorySegment out) {
        final ExpertWeights all = experts(0, shape.experts());
        final int h = shape.hidden();
        final long rowBytes = shape.rowBytes();
        final MemorySegment expertOut = MemorySegment.ofArray(new short[h]);
        final float[] sum = new float[h];
        for (int token = 0; token < routing.tokens(); token++) {
            java.util.Arrays.fill(sum, 0f);
            for (int j = 0; j < routing.topK(); j++) {
                all.apply(routing.expert(token, j), tokens, token * rowBytes, expertOut, 0);
                Combine.accumulate(sum, routing.weight(token, j), expertOut, 0);
            }
            Combine.store(sum, out, token * rowBytes);
        }
    }
}
