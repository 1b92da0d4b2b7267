package dev.transferengine.sample.weights;

import dev.transferengine.sample.SampleProperties;

import java.util.ArrayList;
import java.util.List;

/**
 * Named tensors laid out back to back in one buffer, the same on the trainer and on every inference node.
 *
 * @param tensors the tensors, in buffer order
 */
public record TensorLayout(List<Tensor> tensors) {

    /**
     * One tensor.
     *
     * @param name   its name
     * @param offset first byte in the buffer
     * @param length bytes
     */
    public record Tensor(String name, long offset, long length) {}

    public TensorLayout {
        tensors = List.copyOf(tensors);
    }

    /**
     * The layout configured under {@code sample.weights}: {@code count} tensors named {@code layers.<i>.weight}.
     *
     * @param weights the settings
     * @return the layout
     */
    public static TensorLayout of(final SampleProperties.Weights weights) {
        final long size = weights.size().toBytes();
        final List<Tensor> tensors = new ArrayList<>(weights.count());
        for (int i = 0; i < weights.count(); i++) {
            tensors.add(new Tensor("layers." + i + ".weight", i * size, size));
        }
        return new TensorLayout(tensors);
    }

    /** Bytes of all tensors together. */
    public long bytes() {
        return tensors.stream().mapToLong(Tensor::length).sum();
    }
}
