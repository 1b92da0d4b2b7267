package dev.transferengine.exceptions;

import java.io.Serial;

import org.jspecify.annotations.Nullable;

/** Base of every error the engine reports; each subclass names one kind of problem. */
public class TransferEngineException extends RuntimeException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * A failure with a stack trace, for unexpected problems.
     *
     * @param message what went wrong
     */
    public TransferEngineException(final String message) {
        super(message);
    }

    /**
     * A failure with a stack trace and the failure underneath.
     *
     * @param message what went wrong
     * @param cause the failure underneath
     */
    public TransferEngineException(final String message, final Throwable cause) {
        super(message, cause);
    }

    /**
     * For expected failures (closed, back-pressure, unreachable, timeout): no stack trace is filled and nothing can
     * be suppressed, so making one is cheap and one instance may be shared by many operations; the message, and the
     * cause where there is one, say what happened.
     *
     * @param message what went wrong
     * @param cause the failure underneath, or {@code null}
     * @param stackless {@code true} for an expected failure: no stack trace, no suppressed exceptions
     */
    protected TransferEngineException(final String message, final @Nullable Throwable cause, final boolean stackless) {
        super(message, cause, !stackless, !stackless);
    }
}
