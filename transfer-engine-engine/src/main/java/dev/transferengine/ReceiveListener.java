package dev.transferengine;

import java.lang.foreign.MemorySegment;

/**
 * Receives two-sided messages, on the callback thread. The segment is the pool's buffer: it is valid only until
 * this method returns, after which the buffer goes back to the pool; copy what must outlive the call.
 */
@FunctionalInterface
public interface ReceiveListener {

    /**
     * Reports one message.
     *
     * @param message the message's bytes, exactly as long as the message sent; valid only during this call
     */
    void onReceive(MemorySegment message);
}
