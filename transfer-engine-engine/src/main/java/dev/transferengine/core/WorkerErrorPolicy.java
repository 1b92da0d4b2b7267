package dev.transferengine.core;

/**
 * What a worker does with an {@link Error} from its duty cycle: the one place this policy lives (docs/error-policy.md
 * explains it). A transport lets such an error leave {@code Domain.poll()} or a post call; the worker then fails
 * everything in flight with a {@link dev.transferengine.exceptions.WorkerFailedException}, drops what the NICs
 * reported and closes them, and asks this policy whether it may reopen them.
 *
 * <p>Reopening is safe for the errors the JVM throws at a point of the worker's own code and recovers from
 * ({@link OutOfMemoryError}, e.g. a TLS handshake's buffers on a small heap; {@link StackOverflowError};
 * {@link LinkageError} and {@link AssertionError}): the worker is the only thread that touches its NICs and its
 * in-flight table, so once those are failed and closed no half-updated state is left, and what a restart must
 * re-create (regions, peer groups, receive buffers) is kept by control actions that finished. Any other
 * {@link VirtualMachineError} ({@link InternalError}, {@link UnknownError}) says the JVM itself is broken: the group
 * then stays down for good, failing every later request at once with the same exception instead of ending its
 * thread, since a dead worker would leave queued requests unanswered. Agrona's {@code AgentRunner} would rethrow
 * an {@link Error} and end the thread; the worker catches it before that.
 */
final class WorkerErrorPolicy {

    private WorkerErrorPolicy() {}

    /**
     * Whether a group whose worker hit {@code error} may reopen its NICs and serve again.
     *
     * @param error what the duty cycle threw
     * @return true to reopen after a back-off; false to stay down for good
     */
    static boolean mayReopen(final Error error) {
        return !(error instanceof VirtualMachineError)
                || error instanceof OutOfMemoryError
                || error instanceof StackOverflowError;
    }
}
