package dev.transferengine.core;

import dev.transferengine.EngineCounter;
import dev.transferengine.ReceiveListener;
import dev.transferengine.ReceivePool;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A pool of receive buffers posted on group 0, NIC 0. A buffer travels worker (posted) -> callback thread (listener
 * runs) -> worker (re-posted), so it is never in two places at once.
 */
final class Receives implements ReceivePool {

    private static final long TAG = 1L << 62;

    private final int id;
    private final int bufferSize;
    private final ReceiveListener listener;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment[] buffers;
    private final AtomicInteger available = new AtomicInteger();
    private final DomainGroup group;
    private final CallbackDispatcher callbacks;
    private final Counters counters;
    private volatile boolean closed;

    Receives(final int id, final int bufferSize, final int count, final ReceiveListener listener, final DomainGroup group,
             final CallbackDispatcher callbacks, final Counters counters) {
        this.id = id;
        this.bufferSize = bufferSize;
        this.listener = listener;
        this.group = group;
        this.callbacks = callbacks;
        this.counters = counters;
        this.buffers = new MemorySegment[count];
        for (int i = 0; i < count; i++) {
            buffers[i] = arena.allocate(bufferSize, 64);
        }
    }

    static boolean isReceiveToken(final long token) {
        return (token & TAG) != 0;
    }

    static int poolId(final long token) {
        return (int) ((token & ~TAG) >>> 24);
    }

    static int bufferIndex(final long token) {
        return (int) (token & 0xFF_FFFF);
    }

    int id() {
        return id;
    }

    /** Worker thread. */
    void postAll() {
        for (int i = 0; i < buffers.length; i++) {
            post(i);
        }
    }

    /** Worker thread. */
    void post(final int index) {
        available.incrementAndGet();
        group.domain(0).postReceive(TAG | (long) id << 24 | index, buffers[index]);
    }

    /** Worker thread: buffer {@code index} holds a message; hand it to the listener. */
    void onReceive(final int index, final int length) {
        available.decrementAndGet();
        callbacks.dispatch(() -> deliver(index, length));
    }

    private void deliver(final int index, final int length) {
        try {
            counters.increment(EngineCounter.RECEIVES);
            listener.onReceive(buffers[index].asSlice(0, length));
        } finally {
            if (!closed) {
                group.control(g -> post(index));
            }
        }
    }

    @Override
    public int bufferSize() {
        return bufferSize;
    }

    @Override
    public int count() {
        return buffers.length;
    }

    @Override
    public int available() {
        return available.get();
    }

    @Override
    public void close() {
        closed = true;
    }

    /** At engine close, after the NICs closed: frees the buffers. */
    void release() {
        closed = true;
        arena.close();
    }
}
