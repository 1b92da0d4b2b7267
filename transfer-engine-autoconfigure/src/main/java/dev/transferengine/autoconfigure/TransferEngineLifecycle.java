package dev.transferengine.autoconfigure;

import dev.transferengine.TransferEngine;

import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.SmartLifecycle;

/**
 * Closes the auto-configured engine on shutdown. {@link TransferEngine#close()} lets in-flight operations drain for
 * up to {@code transfer-engine.timeouts.drain} before it fails the rest. The phase is below the web server's, so
 * the engine closes after the server stopped taking requests and finished those it had.
 */
final class TransferEngineLifecycle implements SmartLifecycle, DisposableBean {

    /** Stops after the web server's graceful shutdown ({@code DEFAULT_PHASE - 1024}) and its stop ({@code - 2048}). */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

    private static final Logger LOG = LoggerFactory.getLogger(TransferEngineLifecycle.class);

    private final String name;
    private final TransferEngine engine;
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    TransferEngineLifecycle(final String name, final TransferEngine engine) {
        this.name = name;
        this.engine = engine;
    }

    @Override
    public void start() {
        running.set(true);
    }

    /** Blocks while the engine drains, at most the drain timeout. */
    @Override
    public void stop() {
        running.set(false);
        close();
    }

    @Override
    public boolean isRunning() {
        return running.get();
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    /** Closes the engine when the context goes away without stopping, e.g. when its refresh failed. */
    @Override
    public void destroy() {
        close();
    }

    private void close() {
        if (closed.compareAndSet(false, true)) {
            engine.close();
            LOG.info("transfer engine '{}' closed", name);
        }
    }
}
