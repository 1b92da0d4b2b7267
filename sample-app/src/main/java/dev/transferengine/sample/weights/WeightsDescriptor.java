package dev.transferengine.sample.weights;

import java.util.List;

/**
 * What an inference node publishes so that a trainer can write its tensors into it.
 *
 * @param address the inference engine's main NetworkAddress, text form
 * @param region  the destination buffer's RegionDescriptor, text form
 * @param tensors where each tensor goes in the buffer
 */
public record WeightsDescriptor(String address, String region, List<TensorLayout.Tensor> tensors) {}
