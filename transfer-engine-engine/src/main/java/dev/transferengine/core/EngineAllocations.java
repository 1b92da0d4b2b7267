package dev.transferengine.core;

import dev.transferengine.Device;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The memory an engine allocated for regions ({@code TransferEngine.allocate}) and has not freed yet: freed one by
 * one as their regions are deregistered and drained, and all that is left when the engine closes. Any thread.
 */
final class EngineAllocations {

    private static final Logger LOG = LoggerFactory.getLogger(EngineAllocations.class);

    /** The {@link dev.transferengine.spi.DeviceMemory} provider that allocates device memory. */
    private final String provider;

    private final Set<EngineAllocation> live = ConcurrentHashMap.newKeySet();

    EngineAllocations(final String provider) {
        this.provider = provider;
    }

    /** See {@link EngineAllocation#allocate}. */
    EngineAllocation allocate(final Device device, final long bytes) {
        final EngineAllocation allocation = EngineAllocation.allocate(device, bytes, provider);
        live.add(allocation);
        return allocation;
    }

    /** Frees {@code allocation} now: its region was never registered, or is deregistered and drained. */
    void free(final EngineAllocation allocation) {
        allocation.free();
        live.remove(allocation);
    }

    /** The engine closed (its workers stopped, their NICs closed): frees every allocation left; failures are logged. */
    void freeAll() {
        for (final EngineAllocation allocation : live) {
            try {
                free(allocation);
            } catch (final RuntimeException e) {
                LOG.warn("freeing {} at close failed", allocation, e);
            }
        }
    }
}
