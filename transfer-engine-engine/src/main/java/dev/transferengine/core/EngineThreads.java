package dev.transferengine.core;

import java.util.concurrent.ThreadFactory;

import reactor.core.scheduler.NonBlocking;

/**
 * Makes the engine's worker and callback threads. They are marked {@link NonBlocking}, so Reactor refuses
 * {@code block()} on them instead of letting user code stall a worker or the callback thread.
 */
final class EngineThreads implements ThreadFactory {

    static final EngineThreads INSTANCE = new EngineThreads();

    private static final class EngineThread extends Thread implements NonBlocking {
        EngineThread(final Runnable task) {
            super(task);
            setDaemon(true);
        }
    }

    @Override
    public Thread newThread(final Runnable task) {
        return new EngineThread(task);
    }
}
