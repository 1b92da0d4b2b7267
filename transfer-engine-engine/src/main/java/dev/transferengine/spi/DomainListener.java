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

    /** A write with an imm landed in local memory. */
    void onImm(int imm);

    /** A remote write placed {@code bytes} into local memory. */
    void onBytesReceived(long bytes);
}
