package dev.transferengine;

import java.io.Serial;

/** Bytes or text that should encode a {@link NetAddr} or {@link MrDesc} do not. */
public final class MalformedDescriptorException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    public MalformedDescriptorException(final String message) {
        super(message);
    }

    public MalformedDescriptorException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
