/**
 * Mixture-of-Experts dispatch and combine on the engine's public API, the third system of the TransferEngine paper:
 * dispatcher ranks route bf16 tokens to the top-k experts a gate picks, expert ranks (each owning a share of the
 * experts) compute and write the outputs back, and the dispatcher sums them with the gate's weights.
 *
 * <p>Counts per expert are known only at run time. In {@link dev.transferengine.moe.ExchangeMode#ROUTED} a dispatcher
 * first scatters the counts, then exactly the routed token rows, each with an imm, over a pre-registered peer group;
 * expert ranks wait on {@link dev.transferengine.ImmCounter} credits per sender, so an unordered fabric needs no
 * ordering. {@link dev.transferengine.moe.ExchangeMode#PADDED} does the same exchange the collective way, every slot
 * padded to the worst case, as the baseline. Each layer ends with a barrier among all ranks. A rank that dies fails
 * the layer on its peers with a {@link dev.transferengine.moe.MoeRankFailedException} naming it.
 */
@NullMarked
package dev.transferengine.moe;

import org.jspecify.annotations.NullMarked;
