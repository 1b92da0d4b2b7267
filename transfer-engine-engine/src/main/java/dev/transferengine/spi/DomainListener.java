package dev.transferengine.spi;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.TransferEngineException;

import org.jspecify.annotations.Nullable;

/**
 * Events a domain reports, always on its worker thread, from inside {@link Domain#poll()} (or from a post call
 * that fails at once). Tokens are the engine's; the domain hands them back untouched, and the engine knows from a
 * token whether it was a write or a send (fabric-lib's {@code DomainCompletionEntry} likewise carries only the id).
 *
 * <p>Imm admission is one reservation: {@link #reserveImm} before a byte of an imm write is placed, then exactly one
 * of {@link #onImm} (the write landed) or {@link #releaseImm} (it never will, e.g. its connection broke mid-payload)
 * for every reservation that was granted.
 */
public interface DomainListener {

    /** What {@link #reserveImm} answers when the imm may not land now. */
    long IMM_REFUSED = -1;

    /**
     * One posted write or send finished: a write's bytes are in the peer's memory, a send was acknowledged by the
     * receiver.
     *
     * @param token the token the operation was posted with
     * @param bytes its payload length, in bytes
     */
    void onComplete(long token, long bytes);

    /**
     * {@code pieces} posted writes with one token finished, in one report: what a transport that answers a run of
     * pages at once (tcp's WRITEV) reports instead of {@code pieces} calls of {@link #onComplete}. The default makes
     * those calls, sharing {@code bytes} out evenly (the pages of a paged write have one length).
     *
     * @param token the token the writes were posted with
     * @param bytes their payload length together, in bytes
     * @param pieces how many writes finished, at least 1
     */
    default void onComplete(final long token, final long bytes, final int pieces) {
        for (int i = 0; i < pieces; i++) {
            onComplete(token, bytes / pieces);
        }
    }

    /**
     * One posted write or send failed; reported once, instead of {@link #onComplete}.
     *
     * @param token the token the operation was posted with
     * @param error the typed failure, e.g. {@link dev.transferengine.exceptions.PeerUnreachableException},
     *     {@link dev.transferengine.exceptions.RemoteAccessException} (for a send e.g. with {@code NO_RECEIVE_BUFFER});
     *     may be shared by the operations of a failed connection
     */
    void onFailed(long token, TransferEngineException error);

    /**
     * {@code pieces} posted writes with one token failed with one error, in one report: what a transport that refuses
     * a run of pages at once (a batch of {@link Domain#writePages} refused whole) reports instead of {@code pieces}
     * calls of {@link #onFailed(long, TransferEngineException)}. The default makes those calls.
     *
     * @param token the token the writes were posted with
     * @param error the typed failure, shared by the writes
     * @param pieces how many writes failed, at least 1
     */
    default void onFailed(final long token, final TransferEngineException error, final int pieces) {
        for (int i = 0; i < pieces; i++) {
            onFailed(token, error);
        }
    }

    /**
     * The receive buffer posted with {@code token} now holds a message of {@code length} bytes.
     *
     * @param token the token the buffer was posted with
     * @param length the message's length, in bytes, at most the buffer's size
     */
    void onReceive(long token, int length);

    /**
     * The receive buffer posted with {@code token} was withdrawn ({@link Domain#withdrawReceive}) before a message
     * took it: the domain no longer touches it. The default ignores it, for a listener that posts no receives.
     *
     * @param token the token the buffer was posted with
     */
    default void onReceiveWithdrawn(final long token) {
        // posted no receive buffers: none comes back
    }

    /**
     * Reserves the credit of one incoming imm {@code imm} from {@code peer}, before the bytes of its write are placed.
     * The engine credits at most {@code EngineConfig.maxUnexpectedImms()} distinct imm values nobody expects, and one
     * peer at most a fair share of them, so that one peer filling the bound cannot starve the others; a reservation
     * holds its place until it is consumed by {@link #onImm} or given back by {@link #releaseImm}, so what was
     * reserved is never lost to other writes filling the bound meanwhile. A domain that cannot ask before the bytes
     * land (an RDMA NIC reports the imm with the completion) reserves and consumes at once, and an imm refused then is
     * dropped and counted. Cheap and allocation-free; worker thread.
     *
     * @param peer the sending peer's NIC as it authenticated itself (for tcp, the address its handshake announced),
     *     or null when the domain cannot tell (e.g. a completion queue read without source addresses): all such imms
     *     then share one quota, as large as the bound
     * @param imm the 32-bit imm the incoming write carries
     * @return the reservation, 0 or more, to hand to {@link #onImm} or {@link #releaseImm}; or {@link #IMM_REFUSED}
     *     when the write must be refused (its target memory left untouched); a refusal is counted
     */
    long reserveImm(@Nullable NetworkAddress peer, int imm);

    /**
     * Reserves the credits of {@code count} incoming imms {@code imm} from {@code peer} that one frame carries (tcp's
     * PAGES_IMM): all of them or none, before a byte of the frame is placed. The reservation stands for
     * {@code count} equal reservations of {@link #reserveImm}: {@link #onImms}{@code (reservation, count)} consumes it
     * once all landed, {@link #releaseImms}{@code (reservation, count)} gives it back. The default reserves one at a
     * time and refuses all if one is refused or they differ; the engine takes one lock and one place for them all.
     *
     * @param peer as for {@link #reserveImm}
     * @param imm the imm every one of the writes carries
     * @param count how many, at least 1
     * @return the reservation, 0 or more; or {@link #IMM_REFUSED} when the frame must be refused (memory untouched)
     */
    default long reserveImms(final @Nullable NetworkAddress peer, final int imm, final int count) {
        final long first = reserveImm(peer, imm);
        if (first == IMM_REFUSED) {
            return IMM_REFUSED;
        }
        for (int i = 1; i < count; i++) {
            final long next = reserveImm(peer, imm);
            if (next != first) {
                if (next != IMM_REFUSED) {
                    releaseImm(next);
                }
                releaseImms(first, i);
                return IMM_REFUSED;
            }
        }
        return first;
    }

    /**
     * Gives back what {@link #reserveImms}{@code (peer, imm, count)} (or {@code count} equal {@link #reserveImm}
     * calls) reserved, for writes that will never land. The default calls {@link #releaseImm} that often.
     *
     * @param reservation what was reserved, never {@link #IMM_REFUSED}; consumed by this call
     * @param count how many imms it stands for, at least 1
     */
    default void releaseImms(final long reservation, final int count) {
        for (int i = 0; i < count; i++) {
            releaseImm(reservation);
        }
    }

    /**
     * The write of a reservation landed in local memory: its imm is credited.
     *
     * @param reservation what {@link #reserveImm} returned, never {@link #IMM_REFUSED}; consumed by this call
     */
    void onImm(long reservation);

    /**
     * The writes of {@code count} equal reservations landed: {@code count} imm events, each credited as by
     * {@link #onImm}, in one report (tcp's WRITEV pages of one paged write). The default calls {@link #onImm} that
     * often.
     *
     * @param reservation what {@link #reserveImm} returned, {@code count} times, or {@link #reserveImms} once for
     *     {@code count}, for writes that all landed
     * @param count how many, at least 1
     */
    default void onImms(final long reservation, final int count) {
        for (int i = 0; i < count; i++) {
            onImm(reservation);
        }
    }

    /**
     * Gives back a reservation whose write will never land (its connection or domain closed first).
     *
     * @param reservation what {@link #reserveImm} returned, never {@link #IMM_REFUSED}; consumed by this call
     */
    void releaseImm(long reservation);

    /**
     * A peer's negative acknowledgement arrived (see {@link Domain#abandonImm}): its operation carrying {@code imm}
     * failed, so up to {@code missing} imm events will not come from it. Reported at most once per acknowledgement.
     * The default ignores it.
     *
     * @param peer the sending peer's NIC
     * @param imm the imm value of its failed operation
     * @param missing how many imm events it did not see confirmed, at least 1
     * @param cause the sender's failure as text
     */
    default void onImmAbandoned(final NetworkAddress peer, final int imm, final int missing, final String cause) {
        // a listener that counts no imms has nothing to end
    }

    /**
     * A remote write placed {@code bytes} into local memory, for the NIC's counters.
     *
     * @param bytes bytes placed, 0 or more
     */
    void onBytesReceived(long bytes);
}
