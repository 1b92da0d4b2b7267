package dev.transferengine.transport.tcp;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Iterator;

import org.jspecify.annotations.Nullable;

/**
 * Posted receive buffers in the order they were posted. An incoming SEND takes the first buffer large enough.
 * Worker thread only.
 */
final class TcpReceives {

    /** One posted buffer. */
    record Posted(long token, TcpMemory memory) {}

    private final ArrayDeque<Posted> fifo = new ArrayDeque<>();

    void post(final long token, final MemorySegment buffer) {
        fifo.addLast(new Posted(token, new TcpMemory(buffer)));
    }

    /** Removes and returns the first posted buffer that holds {@code length} bytes, or null if none does. */
    @Nullable Posted takeFitting(final long length) {
        final Posted head = fifo.peekFirst();
        if (head == null || head.memory().size() >= length) {
            return fifo.pollFirst();
        }
        for (final Iterator<Posted> it = fifo.iterator(); it.hasNext(); ) {
            final Posted posted = it.next();
            if (posted.memory().size() >= length) {
                it.remove();
                return posted;
            }
        }
        return null;
    }

    /** Size of the largest posted buffer, or -1 if none is posted; for refusal messages. */
    long largest() {
        long largest = -1;
        for (final Posted posted : fifo) {
            largest = Math.max(largest, posted.memory().size());
        }
        return largest;
    }

    int count() {
        return fifo.size();
    }
}
