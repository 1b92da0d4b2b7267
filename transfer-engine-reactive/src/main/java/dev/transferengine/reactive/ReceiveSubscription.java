package dev.transferengine.reactive;

import dev.transferengine.ReceiveListener;
import dev.transferengine.ReceivePool;
import dev.transferengine.TransferEngine;

import java.lang.foreign.MemorySegment;
import java.util.Set;

import reactor.core.publisher.FluxSink;

/**
 * One {@link ReactiveTransferEngine#receive()} subscription: its own credited pool of {@code receivePoolSize}
 * buffers, where each unit of subscriber demand becomes one receive credit (one posted buffer, one message), closed
 * when the subscription ends. Each message is copied out, so its buffer goes straight back to the engine.
 */
final class ReceiveSubscription implements ReceiveListener {

    private final FluxSink<ReceivedMessage> sink;

    private ReceiveSubscription(final FluxSink<ReceivedMessage> sink) {
        this.sink = sink;
    }

    /**
     * Creates the subscription's pool and turns demand into credit. Blocks until the engine's worker made the pool,
     * so it runs on a bounded-elastic thread.
     */
    static void open(
            final TransferEngine engine,
            final ReactiveOptions options,
            final Set<ReceivePool> live,
            final FluxSink<ReceivedMessage> sink) {
        final ReceivePool pool;
        try {
            pool = engine.creditedReceivePool(
                    options.receiveBufferSize(), options.receivePoolSize(), new ReceiveSubscription(sink));
        } catch (final RuntimeException e) {
            sink.error(e);
            return;
        }
        live.add(pool);
        sink.onRequest(pool::grant);
        // runs at once if the subscriber left while the pool was being posted
        sink.onDispose(() -> {
            live.remove(pool);
            pool.close();
        });
    }

    /** Callback thread: the buffer is only valid during this call, hence the copy. */
    @Override
    public void onReceive(final MemorySegment message) {
        sink.next(ReceivedMessage.copyOf(message));
    }
}
