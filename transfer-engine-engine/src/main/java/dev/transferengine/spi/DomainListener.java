package dev.transferengine.spi;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.TransferEngineException;

/**
 * Events a domain reports, always on its worker thread, from inside {@link Domain#poll()} (or from a post call
 * that fails at once). Tokens are the engine's; the domain hands them back untouched.
 */
public interface DomainListener {

    /**
     * One posted write finished: its bytes are in the peer's memory.
     *
     * @param token the token the write was posted with
     * @param bytes its payload length, in bytes
     */
    void onWriteComplete(long token, long bytes);

    /**
     * One posted write failed; reported once, instead of {@link #onWriteComplete}.
     *
     * @param token the token the write was posted with
     * @param error the typed failure, e.g. {@link dev.transferengine.exceptions.PeerUnreachableException} or
     *     {@link dev.transferengine.exceptions.RemoteAccessException}; may be shared by the writes of a failed connection
     */
    void onWriteFailed(long token, TransferEngineException error);

    /**
     * One posted send was acknowledged by the receiver.
     *
     * @param token the token the send was posted with
     * @param bytes its message length, in bytes
     */
    void onSendComplete(long token, long bytes);

    /**
     * One posted send failed; reported once, instead of {@link #onSendComplete}.
     *
     * @param token the token the send was posted with
     * @param error the typed failure, e.g. {@link dev.transferengine.exceptions.RemoteAccessException} with
     *     {@code NO_RECEIVE_BUFFER}
     */
    void onSendFailed(long token, TransferEngineException error);

    /**
     * The receive buffer posted with {@code token} now holds a message of {@code length} bytes.
     *
     * @param token the token the buffer was posted with
     * @param length the message's length, in bytes, at most the buffer's size
     */
    void onReceive(long token, int length);

    /**
     * Whether an imm write carrying {@code imm} may land now. A domain asks before it places the bytes of a write
     * with an imm and refuses the write (leaving its memory untouched) when this answers false: the engine credits
     * at most {@code EngineConfig.maxUnexpectedImms()} distinct imm values nobody expects, and beyond that bound an
     * unexpected value would be lost. Cheap and allocation-free; worker thread. An imm this answered true for is
     * credited by this domain's next {@link #onImm(int)}, so ask right before placing; a domain that never asks has
     * its imms beyond the bound dropped and counted.
     *
     * @param imm the 32-bit imm the incoming write carries
     * @return true to let the write land; false to refuse it
     */
    default boolean admitsImm(final int imm) {
        return true;
    }

    /**
     * A write with an imm landed in local memory.
     *
     * @param imm the 32-bit imm it carried
     */
    void onImm(int imm);

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
