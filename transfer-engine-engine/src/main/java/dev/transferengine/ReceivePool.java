package dev.transferengine;

/**
 * A pool of receive buffers. One from {@link TransferEngine#postedReceivePool(int, int, ReceiveListener)} keeps every
 * buffer posted; one from {@link TransferEngine#creditedReceivePool(int, int, ReceiveListener)} posts a buffer only against
 * a credit from {@link #grant(long)}, so a consumer's demand becomes receive credit.
 */
public interface ReceivePool extends AutoCloseable {

    /**
     * The size of each buffer. The rule, on every transport (docs/delivery-contract.md): the size the pool was asked
     * for is the longest message it takes; a longer send fails at the sender with
     * {@link dev.transferengine.exceptions.RemoteAccessException} ({@code NO_RECEIVE_BUFFER}) naming the send's
     * size and the largest buffer posted, and lands in no buffer. On the tcp transport this is the size asked for.
     * Not kept yet on the fabric transport (issue 21): it rounds the size up to a power of two, since it matches
     * sends to buffers by size class, reports that size here, and takes sends of up to it; a send longer than every
     * posted buffer waits at the receiver until one it fits is posted.
     *
     * @return the size of one buffer, in bytes
     */
    int bufferSize();

    /**
     * How many buffers the pool holds, fixed when it was made.
     *
     * @return the number of buffers
     */
    int count();

    /**
     * Buffers posted and waiting for a message right now. Any thread; a moment's view, for metrics and tests.
     *
     * @return the number of posted buffers, 0 to {@link #count()}
     */
    int available();

    /**
     * Adds {@code n} receive credits: each lets one buffer be posted for one message. Buffers that come back
     * are posted again while credits remain. Non-blocking; any thread. A pool that keeps every buffer posted ignores
     * credits.
     *
     * @param n credits to add (>= 0)
     * @throws IllegalArgumentException if {@code n} is negative
     */
    void grant(long n);

    /**
     * Withdraws the buffers from the NIC: a later send lands in none of them (docs/delivery-contract.md, "Closing a
     * pool"). A message that had already taken a buffer is still delivered. The memory is freed once every buffer is
     * back from the NIC and the listener. Non-blocking; any thread.
     */
    @Override
    void close();
}
