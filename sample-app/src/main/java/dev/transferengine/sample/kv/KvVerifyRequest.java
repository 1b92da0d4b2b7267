package dev.transferengine.sample.kv;

import java.util.List;

/**
 * Prefill's checksums of what it wrote, one CRC32C per layer over the layer's pages in transfer order.
 *
 * @param layerChecksums the checksums, index = layer
 */
public record KvVerifyRequest(List<Long> layerChecksums) {}
