package dev.transferengine.sample;

/** What one instance of the sample does, chosen with {@code sample.role}. */
public enum Role {

    /** Computes KV-cache pages layer by layer and writes each layer to a decode node as soon as it is ready. */
    PREFILL,

    /** Holds a page pool that prefill nodes write into, and verifies what arrived. */
    DECODE,

    /** Holds named tensors and pushes them to inference nodes through a peer group. */
    TRAINER,

    /** Receives the trainer's tensors and verifies them when the barrier arrives. */
    INFERENCE,

    /** A prefill and a decode in one process, transferring continuously. */
    DEMO,

    /** MoE dispatch and combine: this engine dispatches to expert ranks on engines in this process, layer by layer. */
    MOE
}
