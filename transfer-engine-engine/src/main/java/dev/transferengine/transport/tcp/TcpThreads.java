package dev.transferengine.transport.tcp;

import dev.transferengine.spi.EngineThreadFactory;

import java.util.ServiceLoader;
import java.util.concurrent.ThreadFactory;

/**
 * Makes the transport's own threads (a pipelined TLS connection's socket thread) through the first
 * {@link EngineThreadFactory} found, as core makes the workers (the reactive module's marks them non-blocking for
 * Reactor), else plain threads. The caller names them, makes them daemons and starts them.
 */
final class TcpThreads {

    /** The factory every thread of the transport comes from. */
    static final ThreadFactory FACTORY = ServiceLoader.load(
                    EngineThreadFactory.class, EngineThreadFactory.class.getClassLoader())
            .findFirst()
            .<ThreadFactory>map(factory -> factory)
            .orElse(Thread::new);

    private TcpThreads() {}
}
