package dev.transferengine.core;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine's door for API callers: a caller enters before it touches the workers and leaves after, and
 * {@link #close()} shuts the door and waits until every caller inside left, so nothing is queued to a worker that is
 * being stopped. Lock-free; any thread. The jcstress module checks it ({@code EngineGateStress}).
 */
final class EngineGate {

    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicInteger callersInside = new AtomicInteger();

    /** Counts the caller in, unless closed; a true answer must be followed by {@link #exit()}. */
    boolean tryEnter() {
        callersInside.incrementAndGet();
        if (closed.get()) {
            callersInside.decrementAndGet();
            return false;
        }
        return true;
    }

    /** The caller that entered leaves. */
    void exit() {
        callersInside.decrementAndGet();
    }

    boolean isClosed() {
        return closed.get();
    }

    /**
     * Shuts the door and spins until the callers inside left; only the first call does so.
     *
     * @return true for the call that closed it
     */
    boolean close() {
        if (!closed.compareAndSet(false, true)) {
            return false;
        }
        while (callersInside.get() > 0) {
            Thread.onSpinWait();
        }
        return true;
    }

    /** Shuts the door without waiting: the engine failed to start and no caller has it yet. */
    void shut() {
        closed.set(true);
    }
}
