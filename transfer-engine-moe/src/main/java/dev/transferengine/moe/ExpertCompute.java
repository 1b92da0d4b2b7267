package dev.transferengine.moe;

import java.lang.foreign.MemorySegment;

/**
 * How an expert rank computes its experts on the rows it received: on the CPU ({@link ExpertWeights}) or by a GPU kernel
 * ({@link MoeGpuExperts}), both to the same bytes. Called by the one thread that drives the rank.
 */
public interface ExpertCompute {

    /**
     * Whether this computes an expert.
     *
     * @param expert the expert
     * @return true if it does
     */
    boolean holds(int expert);

    /**
     * Computes consecutive experts on consecutive bf16 rows of H: {@code counts[i]} rows of expert {@code firstExpert +
     * i}, in that order, from {@code in}, each output row written in the same place of {@code out}. Blocks until the
     * outputs are in {@code out}.
     *
     * @param firstExpert the expert of the first count
     * @param counts rows per expert
     * @param in holds the input rows from {@code inOffset}
     * @param inOffset byte offset of the first input row
     * @param out receives the output rows from {@code outOffset}
     * @param outOffset byte offset of the first output row
     * @throws IllegalArgumentException if this does not compute one of the experts or the rows do not fit
     */
    void compute(int firstExpert, int[] counts, MemorySegment in, long inOffset, MemorySegment out, long outOffset);
}
