package dev.transferengine.reactive.internal;

import dev.transferengine.spi.EngineThreadFactory;

import reactor.core.scheduler.NonBlocking;

/**
 * Makes the engine's worker and callback threads {@link NonBlocking}, so Reactor refuses {@code block()} on them
 * instead of letting user code stall a worker or the callback thread. Found by the engine through
 * {@link java.util.ServiceLoader}.
 */
public final class NonBlockingEngineThreads implements EngineThreadFactory {

    /** For {@link java.util.ServiceLoader}. */
    public NonBlockingEngineThreads() {}

    private static final class EngineThread extends Thread implements NonBlocking {
        EngineThread(final Runnable task) {
            super(task);
        }
    }

    @Override
    public Thread newThread(final Runnable task) {
        return new EngineThread(task);
    }
}
