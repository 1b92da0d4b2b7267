package dev.transferengine.core;

import dev.transferengine.EngineCounter;
import dev.transferengine.TransferListener;

import org.agrona.concurrent.Agent;
import org.jctools.queues.atomic.MpscUnboundedAtomicArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that runs user code. Workers (and API threads) enqueue events without waiting: the queue is
 * unbounded so a slow callback never stalls a worker. A callback that throws is logged and counted; the engine
 * lives on.
 */
final class CallbackDispatcher implements Agent {

    private static final Logger LOG = LoggerFactory.getLogger(CallbackDispatcher.class);
    private static final int DRAIN_LIMIT = 256;

    /** {@link Runnable}s, or {@link TransferListener}s whose {@code onDone} is due (no wrapper allocated for them). */
    private final MpscUnboundedAtomicArrayQueue<Object> events = new MpscUnboundedAtomicArrayQueue<>(1024);
    private final Counters counters;

    CallbackDispatcher(final Counters counters) {
        this.counters = counters;
    }

    /** Any thread; never blocks. */
    void dispatch(final Runnable event) {
        events.offer(event);
    }

    /** Any thread; never blocks; allocation-free. */
    void dispatchDone(final TransferListener listener) {
        events.offer(listener);
    }

    @Override
    public int doWork() {
        int work = 0;
        Object event;
        while (work < DRAIN_LIMIT && (event = events.poll()) != null) {
            run(event);
            work++;
        }
        return work;
    }

    /** Runs what is left once workers stopped, so no completion is lost at close. */
    @Override
    public void onClose() {
        Object event;
        while ((event = events.poll()) != null) {
            run(event);
        }
    }

    boolean isIdle() {
        return events.isEmpty();
    }

    private void run(final Object event) {
        try {
            if (event instanceof TransferListener listener) {
                listener.onDone();
            } else {
                ((Runnable) event).run();
            }
        } catch (final RuntimeException e) {
            counters.increment(EngineCounter.CALLBACK_ERRORS);
            LOG.warn("a transfer-engine callback threw; the engine continues", e);
        }
    }

    @Override
    public String roleName() {
        return "te-callback";
    }
}
