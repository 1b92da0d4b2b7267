package dev.transferengine;

import java.io.Serial;

import org.jspecify.annotations.Nullable;

/** Base of every error the engine reports; each subclass names one kind of problem. */
public class TransferEngineException extends RuntimeException {

    @Serial
    private static final long serialVersionUID = 1L;

    public TransferEngineException(final String message) {
        super(message);
    }

    public TransferEngineException(final String message, final @Nullable Throwable cause) {
        super(message, cause);
    }
}
