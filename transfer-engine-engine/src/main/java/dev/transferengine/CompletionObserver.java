package dev.transferengine;

import org.jspecify.annotations.Nullable;

/**
 * Told of every write request and send that ended, for meters: added with
 * {@link EngineMetrics#addCompletionObserver(CompletionObserver)}. Runs on the engine's callback thread, after the
 * fact and in no particular order relative to the operations' own listeners; it must not block. The worker hands
 * it reusable records through bounded queues, so observing allocates nothing; should the callback thread fall
 * that far behind, records are dropped and counted as {@link EngineCounter#COMPLETIONS_UNOBSERVED}.
 */
@FunctionalInterface
public interface CompletionObserver {

    /**
     * Called on the callback thread once per ended operation; must not block.
     *
     * @param kind    what the operation was
     * @param peer    the address the operation went to (a write's first destination NIC), or null for an operation
     *                to a peer group (scatter, barrier)
     * @param bytes   payload bytes of the whole operation (0 for imm-only and barrier writes)
     * @param nanos   from submission to the end, as the worker saw it
     * @param success whether it completed; false for failed and timed-out operations
     */
    void onCompletion(OperationKind kind, @Nullable NetworkAddress peer, long bytes, long nanos, boolean success);
}
