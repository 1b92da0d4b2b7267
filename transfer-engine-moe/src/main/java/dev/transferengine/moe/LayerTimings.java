package dev.transferengine.moe;

/**
 * What one rank measured in one layer, in nanoseconds of {@link System#nanoTime()}.
 *
 * @param dispatchNanos on a dispatcher: from the first post until every expert rank acknowledged the tokens; on an
 *     expert rank: from the layer's start until every dispatcher's tokens were in
 * @param combineNanos on an expert rank: from posting the combine until every dispatcher acknowledged it; on a
 *     dispatcher: from the dispatch's end until every expert rank's outputs were in and summed
 * @param layerNanos from the layer's start until its barrier passed
 * @param postingNanos time spent inside all of this rank's submit calls in the layer (posting cost): the dispatch or
 *     combine scatter and the barrier
 * @param exchangePostingNanos of that, the submit of this rank's dispatch scatter (on a dispatcher, inside {@code
 *     dispatchNanos}) or combine scatter (on an expert rank, inside {@code combineNanos}): the posting that lies on the
 *     transfer's own clock
 * @param sentBytes bytes this rank wrote to peers in the layer
 * @param computeNanos on a dispatcher: packing the rows and summing the outputs; on an expert rank: its experts'
 *     matmul on the rows it got
 * @param barrierNanos from posting the layer's barrier until every other rank's was in
 */
public record LayerTimings(
        long dispatchNanos,
        long combineNanos,
        long layerNanos,
        long postingNanos,
        long exchangePostingNanos,
        long sentBytes,
        long computeNanos,
        long barrierNanos) {}
