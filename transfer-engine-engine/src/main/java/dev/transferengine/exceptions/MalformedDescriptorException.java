package dev.transferengine.exceptions;

import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionDescriptor;

import java.io.Serial;

/** Bytes or text that should encode a {@link NetworkAddress} or {@link RegionDescriptor} do not. */
public final class MalformedDescriptorException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Bytes or text that do not decode.
     *
     * @param message what is wrong with the bytes or text
     */
    public MalformedDescriptorException(final String message) {
        super(message);
    }

    /**
     * Bytes or text that do not decode, because of a parse failure underneath.
     *
     * @param message what is wrong with the bytes or text
     * @param cause the parse failure underneath, e.g. a bad Base64 or host name
     */
    public MalformedDescriptorException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
