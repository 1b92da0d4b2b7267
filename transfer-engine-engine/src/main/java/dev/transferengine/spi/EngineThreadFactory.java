package dev.transferengine.spi;

import java.util.concurrent.ThreadFactory;

/**
 * Makes the engine's worker and callback threads, so a library can mark them: the reactive module's marks them as
 * Reactor {@code NonBlocking}, so Reactor refuses {@code block()} on them instead of letting user code stall a worker
 * or the callback thread. Registered in {@code META-INF/services/dev.transferengine.spi.EngineThreadFactory}; the
 * engine uses the first one it finds, else plain threads. The engine makes every thread a daemon and starts it.
 */
public interface EngineThreadFactory extends ThreadFactory {}
