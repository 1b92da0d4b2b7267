package dev.transferengine.sample.kv;

import java.util.List;

/**
 * What decode saw of one transfer.
 *
 * @param id          the session
 * @param pages       pages per layer
 * @param bytes       bytes received over all layers
 * @param layers      per layer: when it arrived and whether its pages match prefill's checksum
 * @param totalMillis from the session's start to the arrival of the last layer
 * @param verified    whether every layer matched
 */
public record KvReceipt(String id, int pages, long bytes, List<Layer> layers, double totalMillis, boolean verified) {

    /**
     * One layer as decode received it.
     *
     * @param layer         the layer (and imm)
     * @param arrivedMillis from the session's start to the last imm of the layer
     * @param checksum      CRC32C of the pages received
     * @param matches       whether it equals prefill's checksum
     */
    public record Layer(int layer, double arrivedMillis, long checksum, boolean matches) {}
}
