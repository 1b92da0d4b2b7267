package dev.transferengine;

/** A pool of posted receive buffers made by {@link TransferEngine#postReceives(int, int, ReceiveListener)}. */
public interface ReceivePool extends AutoCloseable {

    int bufferSize();

    /** Number of buffers in the pool. */
    int count();

    /** Buffers posted and waiting for a message right now. */
    int available();

    /** Stops re-posting buffers; messages already delivered are unaffected. */
    @Override
    void close();
}
