package dev.transferengine.sample.kv;

import dev.transferengine.sample.PseudoRandomFill;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** Stands in for a layer's forward pass: fills the layer's pages with pseudo-random data, then waits. */
public final class SimulatedLayerCompute implements LayerCompute {

    private final MemorySegment cache;
    private final KvLayout layout;
    private final Duration computeTime;

    /**
     * @param cache       prefill's KV cache
     * @param layout      its shape
     * @param computeTime how long one layer takes
     */
    public SimulatedLayerCompute(final MemorySegment cache, final KvLayout layout, final Duration computeTime) {
        this.cache = cache;
        this.layout = layout;
        this.computeTime = computeTime;
    }

    @Override
    public Mono<Void> compute(final long step, final int layer, final int pages) {
        return Mono.fromRunnable(() -> fill(step, layer, pages))
                .subscribeOn(Schedulers.parallel())
                .then(
                        computeTime.isZero()
                                ? Mono.empty()
                                : Mono.delay(computeTime).then());
    }

    private void fill(final long step, final int layer, final int pages) {
        final long seed = step * 1_000_003L + layer;
        PseudoRandomFill.fill(cache, layout.globalPage(layer, 0) * layout.pageSize(), pages * layout.pageSize(), seed);
    }
}
