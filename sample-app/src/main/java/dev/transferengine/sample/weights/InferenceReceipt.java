package dev.transferengine.sample.weights;

import java.util.List;

/**
 * What an inference node saw of one push.
 *
 * @param version      the push
 * @param bytes        bytes of all tensors
 * @param waitedMillis from the trainer's notice to the barrier's arrival
 * @param tensors      per tensor, whether it matches the trainer's checksum
 * @param verified     whether every tensor matched
 */
public record InferenceReceipt(long version, long bytes, double waitedMillis, List<Tensor> tensors, boolean verified) {

    /**
     * One received tensor.
     *
     * @param name     its name
     * @param checksum CRC32C of what arrived
     * @param matches  whether it equals the trainer's checksum
     */
    public record Tensor(String name, long checksum, boolean matches) {}
}
