package dev.transferengine.transport.tcp;

import dev.transferengine.exceptions.RemoteAccessException.Reason;

import org.jspecify.annotations.Nullable;

/**
 * Why a receiver refused a request, as the {@code aux} field of a NACK carries it. The codes are part of the wire
 * protocol and never change meaning; a new reason gets a new code. Declaration order means nothing.
 */
enum TcpRefusal {
    UNKNOWN_KEY(1, Reason.UNKNOWN_KEY),
    OUT_OF_BOUNDS(2, Reason.OUT_OF_BOUNDS),
    REGION_DEREGISTERED(3, Reason.REGION_DEREGISTERED),
    NO_RECEIVE_BUFFER(4, Reason.NO_RECEIVE_BUFFER),
    MALFORMED(5, Reason.MALFORMED),
    IMM_NOT_ADMITTED(6, Reason.IMM_NOT_ADMITTED),
    NOT_WRITABLE(7, Reason.NOT_WRITABLE),
    NOT_READABLE(8, Reason.NOT_READABLE),
    /**
     * A READ passed its checks but its owner has no room for the connection back to the reader that would carry the
     * bytes ({@code tcp.maxPeers}, every peer connected): the reader fails it with back-pressure, not an access
     * refusal. Sent only to a reader that announced {@link TcpFrame#FEATURE_READ_FAILED}.
     */
    NO_PEER_ROOM(9, null);

    private static final TcpRefusal[] ALL = values();

    private final int code;
    private final @Nullable Reason reason;

    TcpRefusal(final int code, final @Nullable Reason reason) {
        this.code = code;
        this.reason = reason;
    }

    /** The value on the wire. */
    int code() {
        return code;
    }

    /**
     * What the initiator's {@link dev.transferengine.exceptions.RemoteAccessException} reports; null for
     * {@link #NO_PEER_ROOM}, which ends the read with {@link dev.transferengine.exceptions.BackPressureException}.
     */
    @Nullable Reason reason() {
        return reason;
    }

    /** The refusal with this wire code, or null for a code this version does not know. */
    static @Nullable TcpRefusal ofCode(final int code) {
        for (final TcpRefusal refusal : ALL) {
            if (refusal.code == code) {
                return refusal;
            }
        }
        return null;
    }
}
