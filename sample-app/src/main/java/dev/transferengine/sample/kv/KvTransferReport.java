package dev.transferengine.sample.kv;

import java.util.List;

/**
 * Prefill's account of one transfer, returned by {@code POST /kv/transfer}.
 *
 * @param tokens            tokens transferred
 * @param pages             pages per layer
 * @param layers            per layer: when its compute and its writes completed
 * @param bytes             bytes written over all layers
 * @param prefillMillis     from the start to the completion of the last layer's writes
 * @param exposedMillis     from the end of the last layer's compute to the end of its writes: the transfer time that
 *                          layer-by-layer overlap cannot hide
 * @param decode            decode's receipt
 * @param verified          whether decode verified every layer
 */
public record KvTransferReport(
        int tokens,
        int pages,
        List<Layer> layers,
        long bytes,
        double prefillMillis,
        double exposedMillis,
        KvReceipt decode,
        boolean verified) {

    /**
     * One layer as prefill produced it.
     *
     * @param layer          the layer (and imm)
     * @param computedMillis from the start to the end of the layer's compute
     * @param writtenMillis  from the start to the completion of the layer's writes
     */
    public record Layer(int layer, double computedMillis, double writtenMillis) {}
}
