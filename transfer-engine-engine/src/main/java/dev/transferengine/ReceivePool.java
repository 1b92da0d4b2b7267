package dev.transferengine;

/**
 * A pool of receive buffers. One from {@link TransferEngine#postReceives(int, int, ReceiveListener)} keeps every
 * buffer posted; one from {@link TransferEngine#receivePool(int, int, ReceiveListener)} posts a buffer only against
 * a credit from {@link #grant(long)}, so a consumer's demand becomes receive credit.
 */
public interface ReceivePool extends AutoCloseable {

    int bufferSize();

    /** Number of buffers in the pool. */
    int count();

    /** Buffers posted and waiting for a message right now. */
    int available();

    /**
     * Adds {@code n} receive credits: each lets one buffer be posted for one message. Buffers that come back
     * are posted again while credits remain. Non-blocking; any thread.
     */
    void grant(long n);

    /** Stops re-posting buffers; messages already delivered are unaffected. */
    @Override
    void close();
}
