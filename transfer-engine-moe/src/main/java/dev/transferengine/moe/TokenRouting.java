package dev.transferengine.moe;

import java.util.Arrays;

/**
 * Where each token of a layer goes: for token {@code t} and slot {@code j < topK}, an expert and its gate weight. The
 * slots of a token name distinct experts, highest gate score first. Immutable.
 */
public final class TokenRouting {

    private final int tokens;
    private final int topK;
    private final int[] experts;
    private final float[] weights;

    /**
     * A routing from its tables (copied).
     *
     * @param tokens tokens, >= 1
     * @param topK slots per token, >= 1
     * @param experts {@code tokens * topK} experts, token-major
     * @param weights {@code tokens * topK} gate weights, token-major
     * @throws IllegalArgumentException if the tables do not hold {@code tokens * topK} entries, or an expert is negative
     *     or repeats within a token
     */
    public TokenRouting(final int tokens, final int topK, final int[] experts, final float[] weights) {
        if (tokens < 1 || topK < 1 || experts.length != tokens * topK || weights.length != tokens * topK) {
            throw new IllegalArgumentException("a routing of " + tokens + " tokens x " + topK + " needs "
                    + (tokens * topK) + " experts and weights, got " + experts.length + " and " + weights.length);
        }
        for (int t = 0; t < tokens; t++) {
            for (int j = 0; j < topK; j++) {
                final int expert = experts[t * topK + j];
                if (expert < 0) {
                    throw new IllegalArgumentException("token " + t + " slot " + j + " names expert " + expert);
                }
                for (int i = 0; i < j; i++) {
                    if (experts[t * topK + i] == expert) {
                        throw new IllegalArgumentException("token " + t + " names expert " + expert + " twice");
                    }
                }
            }
        }
        this.tokens = tokens;
        this.topK = topK;
        this.experts = experts.clone();
        this.weights = weights.clone();
    }

    /**
     * Tokens routed.
     *
     * @return T
     */
    public int tokens() {
        return tokens;
    }

    /**
     * Slots per token.
     *
     * @return k
     */
    public int topK() {
        return topK;
    }

    /**
     * The expert of a token's slot.
     *
     * @param token the token
     * @param slot the slot, 0..topK-1
     * @return the expert
     */
    public int expert(final int token, final int slot) {
        return experts[token * topK + slot];
    }

    /**
     * The gate weight of a token's slot.
     *
     * @param token the token
     * @param slot the slot, 0..topK-1
     * @return the weight
     */
    public float weight(final int token, final int slot) {
        return weights[token * topK + slot];
    }

    @Override
    public boolean equals(final Object other) {
        return other instanceof TokenRouting that
                && tokens == that.tokens
                && topK == that.topK
                && Arrays.equals(experts, that.experts)
                && Arrays.equals(weights, that.weights);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(experts) + Arrays.hashCode(weights);
    }

    @Override
    public String toString() {
        return "TokenRouting[" + tokens + " tokens x " + topK + "]";
    }
}
