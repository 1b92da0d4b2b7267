package dev.transferengine.core;

import dev.transferengine.EngineCounter;
import dev.transferengine.IdleStrategyKind;
import dev.transferengine.ImmListener;
import dev.transferengine.TransferListener;

import java.util.Objects;
import java.util.function.IntUnaryOperator;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.jctools.queues.atomic.MpscUnboundedAtomicArrayQueue;
import org.jspecify.annotations.Nullable;
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

    /** Imms for the imm listener, in arrival order; guarded by itself. */
    private final ImmEvents imms = new ImmEvents();

    private final Counters counters;
    /** Drains UVM watcher changes on this thread once the engine has watchers; see {@link #attachUvm}. */
    private volatile @Nullable IntUnaryOperator uvm;

    private final ThrottledLog errors = new ThrottledLog(LOG);
    private volatile @Nullable Thread thread;
    private volatile boolean stopping;
    private final WakeableIdle idle;

    CallbackDispatcher(final Counters counters) {
        this(counters, IdleStrategyKind.BACKOFF);
    }

    CallbackDispatcher(final Counters counters, final IdleStrategyKind idleKind) {
        this.counters = counters;
        this.idle = new WakeableIdle(idleKind, () -> !events.isEmpty() || imms.hasAny(), () -> false);
    }

    /** How this dispatcher's thread idles; dispatching wakes it. */
    WakeableIdle idle() {
        return idle;
    }

    /** Any thread; never blocks. */
    void dispatch(final Runnable event) {
        events.offer(event);
        idle.wake();
    }

    /**
     * Tells {@code listener} of one imm on this thread. Any thread; never blocks; allocation-free once the buffer
     * grew to the backlog: one imm is a pair of array slots, not a lambda.
     */
    void dispatchImm(final ImmListener listener, final int imm) {
        synchronized (imms) {
            imms.add(listener, imm);
        }
        idle.wake();
    }

    /** Any thread; never blocks; allocation-free. */
    void dispatchDone(final TransferListener listener) {
        events.offer(listener);
        idle.wake();
    }

    /** Runs {@code drain(limit)} (a UVM watcher service's dispatch) in every duty cycle from now on. Any thread. */
    void attachUvm(final IntUnaryOperator drain) {
        uvm = drain;
    }

    @Override
    public void onStart() {
        thread = Thread.currentThread();
    }

    /** Whether the caller is this dispatcher's thread, i.e. runs inside a callback. */
    boolean isCurrentThread() {
        return Thread.currentThread() == thread;
    }

    /** Called from a callback: the thread ends once that callback returned, after running what is queued. */
    void stopAfterThisEvent() {
        stopping = true;
    }

    @Override
    public int doWork() {
        if (stopping) {
            throw new AgentTerminationException("engine closed from a callback");
        }
        final IntUnaryOperator drainUvm = uvm;
        int work = drainUvm == null ? 0 : drainUvm.applyAsInt(DRAIN_LIMIT);
        work += counters.completions().drain(DRAIN_LIMIT);
        Object event;
        for (int n = 0; n < DRAIN_LIMIT && (event = events.poll()) != null; n++) {
            run(event);
            work++;
        }
        for (int n = 0; n < DRAIN_LIMIT && runImm(); n++) {
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
        while (runImm()) {
            // every imm that arrived is told
        }
        while (counters.completions().drain(DRAIN_LIMIT) > 0) {
            // every ended operation is told to the observers before the engine is gone
        }
    }

    boolean isIdle() {
        return events.isEmpty() && !imms.hasAny();
    }

    /** Tells the oldest queued imm to its listener, outside the lock; false when none is queued. */
    private boolean runImm() {
        final ImmListener listener;
        final int imm;
        synchronized (imms) {
            if (!imms.hasAny()) {
                return false;
            }
            imm = imms.headImm();
            listener = imms.removeHead();
        }
        try {
            listener.onImm(imm);
        } catch (final Throwable e) { // an Error from user code too: this thread serves every other callback
            counters.increment(EngineCounter.CALLBACK_ERRORS);
            errors.warn("a transfer-engine imm listener threw; the engine continues", e);
        }
        return true;
    }

    /** A growable ring of (listener, imm) pairs; the caller holds its monitor. */
    private static final class ImmEvents {
        private @Nullable ImmListener[] listeners = new ImmListener[256];
        private int[] values = new int[256];
        private int head;
        private int size;
        /** Written under the monitor, read without it by the idle check, which only needs a hint. */
        private volatile boolean any;

        boolean hasAny() {
            return any;
        }

        void add(final ImmListener listener, final int imm) {
            if (size == values.length) {
                grow();
            }
            final int tail = (head + size) & (values.length - 1);
            listeners[tail] = listener;
            values[tail] = imm;
            size++;
            any = true;
        }

        int headImm() {
            return values[head];
        }

        ImmListener removeHead() {
            final ImmListener listener = Objects.requireNonNull(listeners[head], "a queued imm has its listener");
            listeners[head] = null;
            head = (head + 1) & (values.length - 1);
            size--;
            any = size > 0;
            return listener;
        }

        private void grow() {
            final int capacity = values.length * 2;
            final @Nullable ImmListener[] moreListeners = new ImmListener[capacity];
            final int[] moreValues = new int[capacity];
            for (int i = 0; i < size; i++) {
                moreListeners[i] = listeners[(head + i) & (values.length - 1)];
                moreValues[i] = values[(head + i) & (values.length - 1)];
            }
            listeners = moreListeners;
            values = moreValues;
            head = 0;
        }
    }

    private void run(final Object event) {
        try {
            if (event instanceof TransferListener listener) {
                listener.onDone();
            } else {
                ((Runnable) event).run();
            }
        } catch (final Throwable e) { // an Error from user code too: this thread serves every other callback
            counters.increment(EngineCounter.CALLBACK_ERRORS);
            errors.warn("a transfer-engine callback threw; the engine continues", e);
        }
    }

    @Override
    public String roleName() {
        return "te-callback";
    }
}
