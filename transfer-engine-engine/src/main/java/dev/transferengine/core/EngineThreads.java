package dev.transferengine.core;

import dev.transferengine.spi.EngineThreadFactory;

import java.util.ServiceLoader;
import java.util.concurrent.ThreadFactory;

/**
 * Makes the engine's worker and callback threads: daemons from the first {@link EngineThreadFactory} found through
 * {@link ServiceLoader} (the reactive module's marks them non-blocking for Reactor), else plain daemon threads.
 */
final class EngineThreads implements ThreadFactory {

    static final EngineThreads INSTANCE =
            new EngineThreads(ServiceLoader.load(EngineThreadFactory.class, EngineThreadFactory.class.getClassLoader())
                    .findFirst()
                    .<ThreadFactory>map(factory -> factory)
                    .orElse(Thread::new));

    private final ThreadFactory factory;

    private EngineThreads(final ThreadFactory factory) {
        this.factory = factory;
    }

    @Override
    public Thread newThread(final Runnable task) {
        final Thread thread = factory.newThread(task);
        thread.setDaemon(true);
        return thread;
    }
}
