package dev.transferengine.exceptions;

import java.io.Serial;

/**
 * The receiver (for a read: the region's owner) refused an operation and left its memory untouched;
 * {@link #reason()} says why. Thrown at submission too where the request's descriptor already shows the access is
 * not allowed ({@link Reason#NOT_WRITABLE}, {@link Reason#NOT_READABLE}). Also how a read ends that its owner stopped
 * serving part-way (its memory was lost, {@link Reason#REGION_DEREGISTERED}, or could not be copied,
 * {@link Reason#SOURCE_FAILED}): the reader's destination then holds the first bytes of the read, as many as the
 * message names, and the rest of it is untouched.
 */
public final class RemoteAccessException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /** Why the receiver refused. */
    public enum Reason {
        /** No region with that remote key: never registered, or deregistered since (a stale key). */
        UNKNOWN_KEY,
        /** The write would fall outside the region. */
        OUT_OF_BOUNDS,
        /** The region was deregistered. */
        REGION_DEREGISTERED,
        /** A two-sided send found no posted receive buffer large enough. */
        NO_RECEIVE_BUFFER,
        /** The receiver could not parse the request. */
        MALFORMED,
        /** The receiver already credits its bound of distinct imm values nobody expects; this one would be lost. */
        IMM_NOT_ADMITTED,
        /** A write into a region registered {@link dev.transferengine.RegionAccess#READ_ONLY}. */
        NOT_WRITABLE,
        /** A read of a region registered {@link dev.transferengine.RegionAccess#WRITE_ONLY}. */
        NOT_READABLE,
        /** The owner accepted a read but could not copy its bytes out of its memory (a device copy failed). */
        SOURCE_FAILED
    }

    /** Why the receiver refused. */
    private final Reason reason;

    /**
     * A refusal reported by the receiver.
     *
     * @param reason why the receiver refused
     * @param message the details, e.g. the key or range; the message reads "{@code <reason>: <message>}"
     */
    public RemoteAccessException(final Reason reason, final String message) {
        super(reason + ": " + message);
        this.reason = reason;
    }

    /**
     * Why the receiver refused, for a caller that handles some reasons (a stale key: fetch a new descriptor).
     *
     * @return why the receiver refused
     */
    public Reason reason() {
        return reason;
    }
}
