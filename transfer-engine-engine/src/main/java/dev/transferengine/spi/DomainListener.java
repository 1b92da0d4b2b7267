package dev.transferengine.spi;

import dev.transferengine.TransferEngineException;

/**
 * Events a domain reports, always on its worker thread, from inside {@link Domain#poll()} (or from a post call
 * that fails at once). Tokens are the engine's; the domain hands them back untouched.
 */
public interface DomainListener {

    /** One posted write finished; {@code bytes} is its payload length. */
    void onWriteComplete(long token, long bytes);

    void onWriteFailed(long token, TransferEngineException error);

    void onSendComplete(long token, long bytes);

    void onSendFailed(long token, TransferEngineException error);

    /** The receive buffer posted with {@code token} now holds a message of {@code length} bytes. */
    void onReceive(long token, int length);

    /**
     * Whether an imm write carrying {@code imm} may land now. A domain asks before it places the bytes of a write
     * with an imm and refuses the write (leaving its memory untouched) when this answers false: the engine credits
     * at most {@code EngineConfig.maxUnexpectedImms()} distinct imm values nobody expects, and beyond that bound an
     * unexpected value would be lost. Cheap and allocation-free; worker thread. An imm this answered true for is
     * credited by this domain's next {@link #onImm(int)}, so ask right before placing; a domain that never asks has
     * its imms beyond the bound dropped and counted.
     */
    default boolean admitsImm(final int imm) {
        return true;
    }

    /** A write with an imm landed in local memory. */
    void onImm(int imm);

    /** A remote write placed {@code bytes} into local memory. */
    void onBytesReceived(long bytes);
}
