package dev.transferengine.sample.weights;

import java.util.List;

/**
 * The trainer's account of one push, returned by {@code POST /weights/push}.
 *
 * @param version      the push
 * @param nodes        the inference nodes, by URL
 * @param tensors      tensors per node
 * @param bytesPerNode bytes written to each node
 * @param totalBytes   bytes written to all nodes
 * @param millis       from the scatter's post to the barrier's completion
 * @param gbPerSecond  {@code totalBytes} over {@code millis}, in 10^9 bytes per second
 * @param receipts     each node's receipt, in {@code nodes} order
 * @param verified     whether every node verified every tensor
 */
public record PushReport(
        long version,
        List<String> nodes,
        int tensors,
        long bytesPerNode,
        long totalBytes,
        double millis,
        double gbPerSecond,
        List<InferenceReceipt> receipts,
        boolean verified) {}
