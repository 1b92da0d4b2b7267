package dev.transferengine;

/** A descriptor or peer address list names a different number of NICs than the group that would use it. */
public final class NicCountMismatchException extends TransferEngineException {

    public NicCountMismatchException(final String message) {
        super(message);
    }
}
