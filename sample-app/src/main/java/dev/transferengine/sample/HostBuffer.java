package dev.transferengine.sample;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionAccess;
import dev.transferengine.TransferEngine;
import dev.transferengine.exceptions.EngineClosedException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Page-aligned host memory registered with an engine; {@link #close()} deregisters it, then frees it, so no write
 * can land in freed memory.
 */
public final class HostBuffer implements AutoCloseable {

    private static final long ALIGNMENT = 4096;

    private final TransferEngine engine;
    private final Arena arena;
    private final MemoryRegion region;

    /**
     * Allocates {@code bytes} zeroed bytes and registers them on group 0 of {@code engine}. Blocks until registered.
     *
     * @param engine the engine peers write through
     * @param bytes  the size of the buffer
     */
    public HostBuffer(final TransferEngine engine, final long bytes) {
        this(engine, bytes, RegionAccess.READ_WRITE);
    }

    /**
     * Allocates {@code bytes} zeroed bytes and registers them on group 0 of {@code engine} with what peers may do with
     * them. Blocks until registered.
     *
     * @param engine the engine peers reach the buffer through
     * @param bytes  the size of the buffer
     * @param access what peers may do: e.g. {@link RegionAccess#READ_ONLY} for a cache decode nodes pull from
     */
    @SuppressWarnings("MustBeClosedChecker") // the buffer owns the arena and closes it in close()
    public HostBuffer(final TransferEngine engine, final long bytes, final RegionAccess access) {
        this.engine = engine;
        this.arena = Arena.ofShared();
        try {
            this.region = engine.register(arena.allocate(bytes, ALIGNMENT), Device.host(), access);
        } catch (final RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** The registered memory. */
    public MemorySegment segment() {
        return region.segment();
    }

    /** The engine's handle of the memory, the source of writes. */
    public MemoryRegion region() {
        return region;
    }

    @Override
    public void close() {
        try {
            if (region.isRegistered()) {
                engine.deregister(region);
            }
        } catch (final EngineClosedException e) {
            // the engine closed first (the starter closes it when the context stops) and took its registrations with it
        } finally {
            arena.close();
        }
    }
}
