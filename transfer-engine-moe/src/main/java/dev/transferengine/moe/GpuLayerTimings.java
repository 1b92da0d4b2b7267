package dev.transferengine.moe;

/**
 * What a {@link MoeGpuDispatcher} measured in one layer, in nanoseconds of {@link System#nanoTime()}.
 *
 * @param layer the timings every dispatcher reports; {@code dispatchNanos} runs from the kernels' launch until every
 *     expert rank acknowledged the tokens
 * @param signalNanos from the kernels' launch until the host proxy saw the watcher's store (routing, packing and the
 *     signal on the GPU, and the watcher's polling)
 * @param watcherToPostNanos from the host proxy seeing the store until the scatter was posted
 * @param dispatchToCombineNanos from the kernels' launch until the combined output was in GPU memory
 */
public record GpuLayerTimings(
        LayerTimings layer, long signalNanos, long watcherToPostNanos, long dispatchToCombineNanos) {}
