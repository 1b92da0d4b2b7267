package dev.transferengine.exceptions;

import dev.transferengine.NetworkAddress;

import java.io.Serial;

/**
 * A negative acknowledgement: a peer tells this receiver that an operation carrying {@link #imm()} failed at the
 * sender (timeout, refusal, unreachable NIC, cancellation, engine close), so up to {@link #missing()} imm events
 * will not come from it. The receiver's matching {@code expectImmCount} listener, {@code ImmCounter.await} and
 * reactive {@code expectImm} end with this error instead of waiting out their own timeout.
 *
 * <p>Stackless: an expected outcome, cheap to make.
 */
public final class ImmAbandonedException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /** The sending peer's NIC. */
    private final NetworkAddress peer;

    /** The imm value whose events will not all come. */
    private final int imm;

    /** How many imm events of the failed operation the sender did not see confirmed. */
    private final int missing;

    /** The sender's failure, as its text. */
    private final String senderCause;

    /**
     * A stackless negative acknowledgement.
     *
     * @param peer the NIC of the peer whose operation failed
     * @param imm the 32-bit imm value the failed operation carried
     * @param missing how many imm events of it the sender did not see confirmed (an upper bound: some may still
     *     land, see docs/delivery-contract.md), at least 1
     * @param senderCause the sender's failure, as the sender described it
     */
    public ImmAbandonedException(
            final NetworkAddress peer, final int imm, final int missing, final String senderCause) {
        super(
                "peer " + peer + " abandoned imm " + imm + ": up to " + missing
                        + " imm events will not come; sender's failure: " + senderCause,
                null,
                true);
        this.peer = peer;
        this.imm = imm;
        this.missing = missing;
        this.senderCause = senderCause;
    }

    /**
     * The peer that gave up the operation.
     *
     * @return the address of the sending peer's NIC
     */
    public NetworkAddress peer() {
        return peer;
    }

    /**
     * The imm value of the failed operation.
     *
     * @return the 32-bit imm value
     */
    public int imm() {
        return imm;
    }

    /**
     * How many imm events will not come: those of the failed operation that the sender did not see confirmed.
     *
     * @return the count, at least 1; an upper bound, as some may still land
     */
    public int missing() {
        return missing;
    }

    /**
     * Why the operation failed at the sender.
     *
     * @return the sender's failure message, e.g. a timeout or a refusal
     */
    public String senderCause() {
        return senderCause;
    }
}
