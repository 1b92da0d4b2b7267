package dev.transferengine.reactive;

import dev.transferengine.ReceiveListener;
import dev.transferengine.ReceivePool;
import dev.transferengine.TransferEngine;

import java.lang.foreign.MemorySegment;
import java.util.Set;

import reactor.core.publisher.FluxSink;

/**
 * One {@link ReactiveTransferEngine#receive()} subscription: its own pool of {@code receivePoolSize} buffers,
 * posted when it subscribes and closed when it ends. Each message is copied out, so its buffer goes straight back
 * to the engine.
 */
final class ReceiveSubscription implements ReceiveListener {

    private final FluxSink<ReceivedMessage> sink;

    private ReceiveSubscription(final FluxSink<ReceivedMessage> sink) {
        this.sink = sink;
    }

    /**
     * Posts the subscription's pool. Blocks until the engine's worker posted it, so it runs on a bounded-elastic
     * thread.
     */
    static void open(final TransferEngine engine, final ReactiveOptions options, final Set<ReceivePool> live,
                     final FluxSink<ReceivedMessage> sink) {
        final ReceivePool pool;
        try {
            pool = engine.postReceives(options.receiveBufferSize(), options.receivePoolSize(),
                new ReceiveSubscription(sink));
        } catch (final RuntimeException e) {
            sink.error(e);
            return;
        }
        live.add(pool);
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
