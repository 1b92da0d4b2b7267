package dev.transferengine.sample.kv;

import reactor.core.publisher.Mono;

/**
 * Produces one layer's KV pages in prefill's cache and signals when they are ready to be sent.
 *
 * <p>This is the seam between the model and the transfer: {@link SimulatedLayerCompute} fills the pages on the CPU
 * and waits a configured time. A GPU implementation would register the cache as device memory, launch the layer's
 * kernels, and complete the {@code Mono} from a {@code UvmWatcher} whose counter the last kernel of the layer bumps,
 * so that the writes start the moment the GPU is done, without a CPU round trip.
 */
@FunctionalInterface
public interface LayerCompute {

    /**
     * Computes pages {@code 0..pages-1} of {@code layer} into the cache.
     *
     * @param step  which transfer this is (the pages' contents differ per step)
     * @param layer the layer
     * @param pages pages per layer
     * @return completes when the layer's pages are in memory
     */
    Mono<Void> compute(long step, int layer, int pages);
}
