package dev.transferengine.reactive;

import dev.transferengine.ReceiveListener;
import dev.transferengine.ReceivePool;
import dev.transferengine.TransferEngine;

import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import reactor.core.publisher.FluxSink;

/**
 * Turns the demand of one {@link ReactiveTransferEngine#receive()} subscription into receive credit: it keeps
 * exactly {@code min(outstanding demand, limit)} buffers posted. Each buffer is a one-buffer {@link ReceivePool}
 * closed by its own first message, so the engine never re-posts it; a buffer is posted again only when demand
 * asks for it.
 */
final class ReceiveCredit {

    private static final Object FIRED = new Object();

    private final TransferEngine engine;
    private final int bufferSize;
    private final int limit;
    private final FluxSink<ReceivedMessage> sink;
    private final Set<OneShot> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger posted;
    private final AtomicInteger wip = new AtomicInteger();
    private volatile boolean disposed;

    ReceiveCredit(final TransferEngine engine, final ReactiveOptions options, final FluxSink<ReceivedMessage> sink,
                  final AtomicInteger posted) {
        this.engine = engine;
        this.bufferSize = options.receiveBufferSize();
        this.limit = options.receivePoolSize();
        this.sink = sink;
        this.posted = posted;
    }

    /** Wires demand and disposal; called once, on the subscribing thread. */
    void start() {
        sink.onDispose(this::dispose);
        sink.onRequest(n -> topUp());
    }

    /**
     * Posts buffers until their number matches the outstanding demand (at most {@code limit}). Runs on the
     * requesting thread or the callback thread; a work-in-progress counter lets only one of them post at a time,
     * and the other's wish is served by the loop.
     */
    private void topUp() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            final long wanted = Math.min(sink.requestedFromDownstream(), limit);
            while (!disposed && open.size() < wanted) {
                if (!postOne()) {
                    return;
                }
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    private boolean postOne() {
        final OneShot shot = new OneShot();
        open.add(shot);
        posted.incrementAndGet();
        final ReceivePool pool;
        try {
            pool = engine.postReceives(bufferSize, 1, shot);
        } catch (final RuntimeException e) {
            if (open.remove(shot)) {
                posted.decrementAndGet();
            }
            sink.error(e);
            return false;
        }
        shot.attach(pool);
        return true;
    }

    private void dispose() {
        disposed = true;
        for (final OneShot shot : open) {
            if (open.remove(shot)) {
                posted.decrementAndGet();
                shot.cancel();
            }
        }
    }

    /** One posted buffer, good for one message. */
    private final class OneShot implements ReceiveListener {

        /** Null until the pool is known, then the pool, then {@link #FIRED} once closed. */
        private final AtomicReference<Object> state = new AtomicReference<>();

        void attach(final ReceivePool pool) {
            if (!state.compareAndSet(null, pool)) {
                pool.close();
            }
        }

        void cancel() {
            if (state.getAndSet(FIRED) instanceof ReceivePool pool) {
                pool.close();
            }
        }

        @Override
        public void onReceive(final MemorySegment message) {
            if (disposed) {
                // the subscription was cancelled while this message was landing: nobody is left to take it
                cancel();
                return;
            }
            // The pool must be closed before this method returns, or the engine re-posts the buffer. The pool is
            // published by postReceives' caller right after the call returns, so this wait is a few instructions
            // long, and it never happens when the caller is this thread (posting from a callback).
            while (state.get() == null) {
                Thread.onSpinWait();
            }
            cancel();
            // Emit before giving the credit back: in between, a concurrent topUp sees less demand and the same
            // buffers, so it can only post too few (fixed below), never more buffers than there is demand.
            sink.next(ReceivedMessage.copyOf(message));
            if (open.remove(this)) {
                posted.decrementAndGet();
            }
            topUp();
        }
    }
}
