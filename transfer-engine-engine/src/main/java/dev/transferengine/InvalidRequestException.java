package dev.transferengine;

/** A request that cannot be carried out as given: a NIC index or shard count this group lacks, an unknown region, ... */
public final class InvalidRequestException extends TransferEngineException {

    public InvalidRequestException(final String message) {
        super(message);
    }
}
