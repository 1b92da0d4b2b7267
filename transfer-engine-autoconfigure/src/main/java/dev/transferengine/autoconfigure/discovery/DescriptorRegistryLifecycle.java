package dev.transferengine.autoconfigure.discovery;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Announces the engine once the application is up, and on shutdown removes its entry (peers see it vanish at once,
 * before the web server and the engine stop) and closes the registry. An engine that dies without this shutdown
 * vanishes when its lease runs out.
 */
final class DescriptorRegistryLifecycle implements SmartLifecycle {

    /** After the web server started (it serves the exchange), before its graceful shutdown ({@code - 1024}). */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 512;

    private static final Logger LOG = LoggerFactory.getLogger(DescriptorRegistryLifecycle.class);

    /** Shutdown does not wait long for an unreachable registry: the lease removes the entry anyway. */
    private static final Duration REMOVAL_WAIT = Duration.ofSeconds(5);

    private final DescriptorRegistry registry;
    private final Duration wait;
    private volatile boolean running;

    /** {@code wait}: how long start-up waits for the announcement. */
    DescriptorRegistryLifecycle(final DescriptorRegistry registry, final Duration wait) {
        this.registry = registry;
        this.wait = wait;
    }

    /**
     * Blocks the starting thread until the entry is published; a registry that cannot be reached fails start-up with
     * a {@link DescriptorRegistryUnavailableException}.
     */
    @Override
    public void start() {
        try {
            registry.announce().block(wait);
        } catch (final RuntimeException e) {
            throw new DescriptorRegistryUnavailableException(
                    registry.engineName(), registry.getClass().getSimpleName(), e);
        }
        running = true;
        LOG.info(
                "engine '{}' announced in the descriptor registry ({})",
                registry.engineName(),
                registry.getClass().getSimpleName());
    }

    @Override
    public void stop() {
        running = false;
        try {
            registry.unpublish().block(REMOVAL_WAIT);
        } catch (final RuntimeException e) {
            LOG.warn(
                    "could not remove engine '{}' from the descriptor registry; it vanishes when its lease runs out:"
                            + " {}",
                    registry.engineName(),
                    e.toString());
        } finally {
            registry.close();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
