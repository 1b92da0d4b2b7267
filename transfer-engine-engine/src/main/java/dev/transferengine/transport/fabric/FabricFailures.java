package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;

import org.jspecify.annotations.Nullable;

/**
 * Turns a failed post or a completion error (the {@code err} of a fi_cq_err_entry, a positive FI_E* / errno value,
 * plus the provider's own text from fi_cq_strerror) into the engine's typed exceptions. Runs only on failures, so it
 * may allocate.
 */
final class FabricFailures {

    static final int ENOENT = 2;
    static final int FI_ENOENT = 2;
    static final int FI_EIO = 5;
    static final int FI_EAGAIN = 11;
    static final int FI_EACCES = 13;
    static final int FI_EFAULT = 14;
    static final int FI_EINVAL = 22;
    static final int FI_EPIPE = 32;
    static final int FI_EOVERFLOW = 75;
    static final int FI_EMSGSIZE = 90;
    static final int FI_ENETDOWN = 100;
    static final int FI_ENETUNREACH = 101;
    static final int FI_ECONNABORTED = 103;
    static final int FI_ECONNRESET = 104;
    static final int FI_ENOTCONN = 107;
    static final int FI_ESHUTDOWN = 108;
    static final int FI_ETIMEDOUT = 110;
    static final int FI_ECONNREFUSED = 111;
    static final int FI_EHOSTDOWN = 112;
    static final int FI_EHOSTUNREACH = 113;
    static final int FI_ECANCELED = 125;
    static final int FI_EKEYREJECTED = 129;
    static final int FI_EAVAIL = 259;
    static final int FI_ETRUNC = 265;
    static final int FI_ENOKEY = 266;
    static final int FI_EREMOTEIO = 121;

    private FabricFailures() {}

    /**
     * Whether a failure means the peer cannot be reached (connection lost, refused, timed out). tcp;ofi_rxm cancels
     * the operations of a connection it lost, with the socket error as {@code provErrno}.
     */
    static boolean isUnreachable(final int err, final int provErrno) {
        return isConnectionError(err) || (err == FI_ECANCELED && isConnectionError(provErrno));
    }

    private static boolean isConnectionError(final int err) {
        return switch (err) {
            case FI_EIO,
                    FI_EPIPE,
                    FI_ENETDOWN,
                    FI_ENETUNREACH,
                    FI_ECONNABORTED,
                    FI_ECONNRESET,
                    FI_ENOTCONN,
                    FI_ESHUTDOWN,
                    FI_ETIMEDOUT,
                    FI_ECONNREFUSED,
                    FI_EHOSTDOWN,
                    FI_EHOSTUNREACH -> true;
            default -> false;
        };
    }

    /**
     * The exception for a failed write, read or send.
     *
     * @param err       the positive error number of the completion (or of the failed post)
     * @param provErrno the provider's own error number, 0 when there is none
     * @param text      what libfabric and the provider said about it
     * @param operation {@code write}, {@code read} or {@code send}: key, bounds and access errors apply to the
     *                  one-sided ones
     * @param peer      the peer's address, or null when unknown
     * @param provider  the provider's name, for the message
     */
    static TransferEngineException translate(
            final int err,
            final int provErrno,
            final String text,
            final String operation,
            final @Nullable NetworkAddress peer,
            final String provider) {
        final String detail = provider + ": " + text + " (err " + err + ")";
        final boolean write = !"send".equals(operation);
        if (write
                && (err == FI_EKEYREJECTED
                        || err == FI_ENOKEY
                        || (err == FI_ECANCELED && provErrno != 0 && !isConnectionError(provErrno)))) {
            // tcp;ofi_rxm cancels a write the target refused and passes ENOENT along (1.17), both for a key it does
            // not know and for an access outside the region (ofi_mr_map_verify does not tell them apart). 2.1's
            // tcp drops the connection of a refused write instead, and the cancelled write carries whatever errno
            // was left (EINPROGRESS for unknown and stale keys, ENOMEM out of bounds, seen here); a lost peer
            // carries the socket's error (ECONNRESET, ECONNREFUSED...) and stays "unreachable".
            return new RemoteAccessException(
                    RemoteAccessException.Reason.UNKNOWN_KEY,
                    "the peer refused the " + operation
                            + ": unknown or stale key, an access outside the region, or one the region's access rights"
                            + " do not allow; " + detail);
        }
        if (write
                && (err == FI_EACCES
                        || err == FI_EINVAL
                        || err == FI_EFAULT
                        || err == FI_EREMOTEIO
                        || err == FI_EOVERFLOW
                        || err == FI_ETRUNC
                        || err == FI_EMSGSIZE)) {
            return new RemoteAccessException(
                    RemoteAccessException.Reason.OUT_OF_BOUNDS,
                    "the peer refused the " + operation
                            + ": an access outside the region or one its access rights do not allow, or a key it does"
                            + " not know; " + detail);
        }
        if (isUnreachable(err, provErrno) && peer != null) {
            return new PeerUnreachableException(peer, detail);
        }
        return new TransferEngineException(operation + " failed: " + detail);
    }
}
