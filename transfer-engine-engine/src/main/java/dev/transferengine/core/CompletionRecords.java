package dev.transferengine.core;

import dev.transferengine.CompletionObserver;
import dev.transferengine.EngineCounter;
import dev.transferengine.NetworkAddress;
import dev.transferengine.OperationKind;

import java.util.concurrent.CopyOnWriteArrayList;

import org.jctools.queues.atomic.MpmcAtomicArrayQueue;
import org.jctools.queues.atomic.MpscAtomicArrayQueue;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries ended operations from the workers to the {@link CompletionObserver}s on the callback thread, so neither
 * side allocates or waits: a fixed set of reusable records circulates from a free queue (workers take, the callback
 * thread returns) to a filled queue (workers add, the callback thread drains). Idle until the first observer
 * arrives; with no free record left the operation goes untold and is counted.
 */
final class CompletionRecords {

    private static final Logger LOG = LoggerFactory.getLogger(CompletionRecords.class);
    private static final int CAPACITY = 16384;

    /** One ended operation, reused. */
    private static final class Ended {
        OperationKind kind = OperationKind.WRITE;

        @Nullable NetworkAddress peer;

        long bytes;
        long nanos;
        boolean success;
    }

    /** The queues, created together by the first observer. */
    private record Channel(MpmcAtomicArrayQueue<Ended> free, MpscAtomicArrayQueue<Ended> filled) {}

    private final Counters counters;
    private final CopyOnWriteArrayList<CompletionObserver> observers = new CopyOnWriteArrayList<>();
    private volatile @Nullable Channel channel;

    CompletionRecords(final Counters counters) {
        this.counters = counters;
    }

    /** Any thread. */
    synchronized void add(final CompletionObserver observer) {
        observers.add(observer);
        if (channel == null) {
            final Channel created =
                    new Channel(new MpmcAtomicArrayQueue<>(CAPACITY), new MpscAtomicArrayQueue<>(CAPACITY));
            for (int i = 0; i < CAPACITY; i++) {
                created.free().offer(new Ended());
            }
            channel = created;
        }
    }

    /** Worker thread; allocation-free. */
    void record(
            final OperationKind kind,
            final @Nullable NetworkAddress peer,
            final long bytes,
            final long nanos,
            final boolean success) {
        final Channel target = channel;
        if (target == null) {
            return;
        }
        final Ended record = target.free().poll();
        if (record == null) {
            counters.increment(EngineCounter.COMPLETIONS_UNOBSERVED);
            return;
        }
        record.kind = kind;
        record.peer = peer;
        record.bytes = bytes;
        record.nanos = nanos;
        record.success = success;
        target.filled().offer(record);
    }

    /** Callback thread: tells the observers of at most {@code limit} records; returns how many. */
    int drain(final int limit) {
        final Channel source = channel;
        if (source == null) {
            return 0;
        }
        int drained = 0;
        Ended record;
        while (drained < limit && (record = source.filled().poll()) != null) {
            tell(record);
            record.peer = null;
            source.free().offer(record);
            drained++;
        }
        return drained;
    }

    private void tell(final Ended record) {
        for (int i = 0; i < observers.size(); i++) {
            try {
                observers.get(i).onCompletion(record.kind, record.peer, record.bytes, record.nanos, record.success);
            } catch (final RuntimeException e) {
                counters.increment(EngineCounter.CALLBACK_ERRORS);
                LOG.warn("a completion observer threw; the engine continues", e);
            }
        }
    }
}
