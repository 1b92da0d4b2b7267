package dev.transferengine.spi;

import java.lang.foreign.MemorySegment;

/** Pinned host memory from {@link DeviceMemory#allocateStaging(int, long)}; freed by {@link #close()}. */
public interface StagingBuffer extends AutoCloseable {

    /**
     * The host-readable memory; invalid once closed.
     *
     * @return the pinned, host-readable segment
     */
    MemorySegment segment();

    /** Frees the memory. Blocks for the driver call; no copy may still use it. Idempotent. */
    @Override
    void close();
}
