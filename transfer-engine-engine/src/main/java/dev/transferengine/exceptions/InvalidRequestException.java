package dev.transferengine.exceptions;

import java.io.Serial;

/** A request that cannot be carried out as given: a NIC index or shard count this group lacks, an unknown region, ... */
public final class InvalidRequestException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * A request this engine refuses before anything is sent.
     *
     * @param message what in the request cannot be carried out, naming the index, count or region
     */
    public InvalidRequestException(final String message) {
        super(message);
    }
}
