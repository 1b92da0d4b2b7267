package dev.transferengine.autoconfigure.exchange;

import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The regions this service lets its peers write into, by name; served by the descriptor endpoint when
 * {@code transfer-engine.exchange.enabled=true}. Publishing hands out remote keys: whoever reads them can write into
 * the region, so publish only what peers must reach and keep the endpoint on a trusted network. Thread-safe.
 */
public final class PublishedRegions {

    private final TransferEngine engine;
    private final Map<String, RegionDescriptor> regions = new ConcurrentSkipListMap<>();
    /** Start time in ms times 1000 plus the changes since: new on a restart, one up on every change. */
    private final AtomicLong generation = new AtomicLong(System.currentTimeMillis() * 1000);

    /**
     * An empty set of published regions.
     *
     * @param engine the engine whose main address is published with the regions
     */
    public PublishedRegions(final TransferEngine engine) {
        this.engine = engine;
    }

    /**
     * Publishes {@code region}'s descriptor under {@code name}, replacing what was published under it. The
     * descriptor is read now: after a {@link MemoryRegion#rekey()}, publish the region again.
     *
     * @param name the name peers fetch it by; non-blank, without {@code /}
     * @param region the region to publish
     * @throws IllegalArgumentException if the name is blank or contains {@code /}
     */
    public void publish(final String name, final MemoryRegion region) {
        publish(name, region.descriptor());
    }

    /**
     * Publishes {@code descriptor} under {@code name}, replacing what was published under it.
     *
     * @param name the name peers fetch it by; non-blank, without {@code /}
     * @param descriptor the descriptor to hand out
     * @throws IllegalArgumentException if the name is blank or contains {@code /}
     */
    public void publish(final String name, final RegionDescriptor descriptor) {
        if (name.isBlank() || name.contains("/")) {
            throw new IllegalArgumentException(
                    "a published region's name must be non-blank without '/': '" + name + "'");
        }
        regions.put(name, descriptor);
        generation.incrementAndGet();
    }

    /**
     * Stops publishing {@code name}; peers that fetched it before keep their copy until the region is deregistered.
     *
     * @param name the name it was published under; an unknown name is ignored
     */
    public void withdraw(final String name) {
        if (regions.remove(name) != null) {
            generation.incrementAndGet();
        }
    }

    /**
     * What is published now. Allocates.
     *
     * @return the engine's main address, the generation and the published descriptors by name, a snapshot
     */
    public ServiceDescriptors snapshot() {
        return new ServiceDescriptors(engine.mainAddress(), generation.get(), regions);
    }
}
