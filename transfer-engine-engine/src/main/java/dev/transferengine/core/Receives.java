package dev.transferengine.core;

import dev.transferengine.EngineCounter;
import dev.transferengine.ReceiveListener;
import dev.transferengine.ReceivePool;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.agrona.collections.IntArrayQueue;
import org.jctools.queues.atomic.MpscAtomicArrayQueue;

/**
 * A pool of receive buffers posted on group 0, NIC 0. A buffer travels worker (posted) -> callback thread (listener
 * runs) -> worker (re-posted, or kept idle until a credit comes), so it is never in two places at once. Credits
 * and idle buffers belong to the worker. Each buffer has one {@link Delivery}, the callback that hands it to the
 * listener and then travels back through the pool's ring: a message costs no allocation but its slice. Closing
 * withdraws every buffer from the NIC; once all are back (withdrawn, or delivered and returned by the listener) the
 * memory is freed.
 */
final class Receives implements ReceivePool {

    private static final long TAG = 1L << 62;

    private final int id;
    private final int bufferSize;
    private final ReceiveListener listener;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment[] buffers;
    private final AtomicInteger available = new AtomicInteger();
    private final boolean credited;
    private final IntArrayQueue idle;
    /** Per buffer: posted on the NIC now (worker-owned). */
    private final boolean[] posted;

    /** Buffers back from the listener, for the worker; never more than {@link #buffers}, so never full. */
    private final MpscAtomicArrayQueue<Delivery> returns;
    /** Credits granted by any thread, not yet taken by the worker. */
    private final AtomicLong granted = new AtomicLong();

    private final Delivery[] deliveries;
    /** The memory was freed: by the worker once a closed pool's buffers are all back, or at engine close. */
    private final AtomicBoolean freed = new AtomicBoolean();
    /** The worker asked the NIC for the buffers back (worker-owned). */
    private boolean withdrawing;

    private long credits;
    private final DomainGroup group;
    private final CallbackDispatcher callbacks;
    private final Counters counters;
    private volatile boolean closed;

    Receives(
            final int id,
            final int bufferSize,
            final int count,
            final boolean credited,
            final ReceiveListener listener,
            final DomainGroup group) {
        this.id = id;
        this.bufferSize = bufferSize;
        this.listener = listener;
        this.group = group;
        this.callbacks = group.services().callbacks();
        this.counters = group.services().counters();
        this.credited = credited;
        this.buffers = new MemorySegment[count];
        this.posted = new boolean[count];
        this.idle = new IntArrayQueue(Math.max(IntArrayQueue.MIN_CAPACITY, count), IntArrayQueue.DEFAULT_NULL_VALUE);
        this.returns = new MpscAtomicArrayQueue<>(Math.max(2, count));
        this.deliveries = new Delivery[count];
        for (int i = 0; i < count; i++) {
            buffers[i] = arena.allocate(bufferSize, 64);
            deliveries[i] = new Delivery(i);
            idle.offerInt(i);
        }
    }

    /** Hands buffer {@link #index} to the listener on the callback thread, then back to the worker. */
    private final class Delivery implements Runnable {
        final int index;
        /** Written by the worker before dispatching, read by the callback thread after: the queue orders them. */
        int length;

        Delivery(final int index) {
            this.index = index;
        }

        @Override
        public void run() {
            try {
                counters.increment(EngineCounter.RECEIVES);
                listener.onReceive(buffers[index].asSlice(0, length));
            } finally {
                returns.offer(this);
                group.idle().wake();
            }
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

    /** Worker thread: a pool that is not credited posts every buffer at once. */
    void start() {
        if (!credited && !closed) {
            while (!idle.isEmpty()) {
                post(idle.pollInt());
            }
        }
    }

    /** Worker thread. */
    private void post(final int index) {
        available.incrementAndGet();
        posted[index] = true;
        group.domain(0).postReceive(token(index), buffers[index]);
    }

    private long token(final int index) {
        return TAG | (long) id << 24 | index;
    }

    /** Worker thread: a buffer is back from the listener. */
    private void returned(final int index) {
        if (!closed && (!credited || credits > 0)) {
            if (credited) {
                credits--;
            }
            post(index);
        } else {
            idle.offerInt(index);
        }
    }

    /** Worker thread. */
    private void credit(final long n) {
        credits += n;
        while (!closed && credits > 0 && !idle.isEmpty()) {
            credits--;
            post(idle.pollInt());
        }
    }

    /**
     * Worker thread, after the NIC was reopened: the buffers posted on the old one are gone with it, so they are
     * posted again (a credited pool gets back the credits they had used).
     */
    void repost() {
        for (int index = 0; index < posted.length; index++) {
            if (posted[index]) {
                posted[index] = false;
                available.decrementAndGet();
                idle.offerInt(index);
                if (credited) {
                    credits++;
                }
            }
        }
        if (credited) {
            credit(0);
        } else {
            start();
        }
    }

    /** Worker thread: buffer {@code index} holds a message; hand it to the listener. */
    void onReceive(final int index, final int length) {
        available.decrementAndGet();
        posted[index] = false;
        final Delivery delivery = deliveries[index];
        delivery.length = length;
        callbacks.dispatch(delivery);
    }

    /**
     * Worker thread: buffer {@code index} came back from the NIC unused: withdrawn since the pool closed, or (a
     * provider's own cancel) posted again while it is open.
     */
    void onWithdrawn(final int index) {
        if (!posted[index]) {
            return; // a domain reported it twice: it must not be idle twice
        }
        available.decrementAndGet();
        posted[index] = false;
        returned(index);
    }

    /**
     * Worker thread, once the pool closed: asks the NIC for every buffer back. The NIC also forgets the buffers the
     * listener holds, which are not posted again.
     */
    private void withdraw() {
        withdrawing = true;
        for (int index = 0; index < buffers.length; index++) {
            group.domain(0).withdrawReceive(token(index));
        }
    }

    /** Worker thread: posts the buffers the listener returned and takes the credits granted meanwhile. */
    int serve() {
        int work = 0;
        if (closed && !withdrawing) {
            withdraw();
            work++;
        }
        for (Delivery back = returns.poll(); back != null; back = returns.poll()) {
            returned(back.index);
            work++;
        }
        // read before taking: every duty cycle serves every pool, and an exchange on a quiet counter would cost the
        // worker an atomic write each cycle
        final long n = granted.get() > 0 ? granted.getAndSet(0) : 0;
        if (n > 0) {
            credit(n);
            work++;
        }
        if (withdrawing && idle.size() == buffers.length) {
            release();
        }
        return work;
    }

    /** Worker thread: whether {@link #serve} has something to do. */
    boolean hasPending() {
        return !returns.isEmpty() || granted.get() > 0 || (closed && !withdrawing);
    }

    /** Whether the memory was freed: the pool is done. */
    boolean freed() {
        return freed.get();
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
    public void grant(final long n) {
        if (n < 0) {
            throw new IllegalArgumentException("credits must be >= 0, was " + n);
        }
        if (!credited) {
            return; // every buffer is posted already
        }
        granted.addAndGet(n);
        group.idle().wake();
    }

    /** Withdraws the buffers from the NIC (a message already landing in one is still delivered), then frees them. */
    @Override
    public void close() {
        closed = true;
        group.idle().wake();
    }

    /** Once the NIC holds none of the buffers and the listener none (at engine close: the NICs closed): frees them. */
    void release() {
        closed = true;
        if (freed.compareAndSet(false, true)) {
            arena.close();
        }
    }
}
