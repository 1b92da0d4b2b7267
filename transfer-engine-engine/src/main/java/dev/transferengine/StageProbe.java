package dev.transferengine;

/**
 * Told when each stage of an operation happened, for latency decomposition (te-bench {@code --stages}): installed
 * with {@link EngineMetrics#setStageProbe(StageProbe)}. While none is installed the engine takes no extra
 * timestamps, so it costs one field read per operation.
 *
 * <p>Runs on the worker thread, inside its duty cycle: it must be quick, must not block and should not allocate.
 * An exception it throws is counted as {@link EngineCounter#CALLBACK_ERRORS} and otherwise ignored. Timestamps
 * are {@link System#nanoTime()} values.
 */
public interface StageProbe {

    /**
     * A write request or send ended. Stages: the caller submitted it, the worker took it from its queue, the worker
     * handed its last piece to the transport (posted), and the worker read the last piece's completion. What lies
     * between posted and completed is the wire and the remote side; the listener or counter runs after completed.
     *
     * @param kind           what the operation was
     * @param submittedNanos when the caller submitted it
     * @param takenNanos     when the worker took it from its submission queue
     * @param postedNanos    when the worker handed its last piece to the transport
     * @param completedNanos when the worker read its last piece's completion
     * @param success        whether it completed
     */
    void onStages(
            OperationKind kind,
            long submittedNanos,
            long takenNanos,
            long postedNanos,
            long completedNanos,
            boolean success);

    /**
     * An imm arrived from a peer and is about to be credited to its counter; by default ignored.
     *
     * @param imm the 32-bit imm value
     * @param arrivedNanos when the worker read it from the transport
     */
    default void onImmArrived(final int imm, final long arrivedNanos) {}
}
