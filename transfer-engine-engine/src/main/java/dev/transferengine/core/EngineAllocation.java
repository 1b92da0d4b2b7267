package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.DeviceMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

/**
 * Memory the engine allocated for one region ({@code TransferEngine.allocate}) and frees itself: host memory from
 * a shared arena of its own, device memory from the device memory provider. The application never frees it, so no
 * remote write can land in it after a free: the engine frees it only once the region is deregistered and its group
 * saw nothing touch it any more ({@link #drained()}, {@link AllocationDrains}), or when the engine closes.
 */
final class EngineAllocation {

    /** Host memory is page-aligned, as staging and NICs like it. */
    private static final long HOST_ALIGNMENT = 4096;

    private final MemorySegment segment;
    private final @Nullable Arena arena;
    private final @Nullable DeviceMemory provider;
    private final int device;
    private final AtomicBoolean freed = new AtomicBoolean();
    /** Completed by the region's worker once nothing it queued touches the memory after deregistration. */
    private final CompletableFuture<Void> drained = new CompletableFuture<>();

    private EngineAllocation(
            final MemorySegment segment,
            final @Nullable Arena arena,
            final @Nullable DeviceMemory provider,
            final int device) {
        this.segment = segment;
        this.arena = arena;
        this.provider = provider;
        this.device = device;
    }

    /**
     * Allocates {@code bytes} on {@code device}: a shared arena for host memory, the provider named {@code
     * provider} ({@link DeviceMemory#OPTION}) for a GPU. Blocks for the allocation.
     *
     * @throws InvalidRequestException if {@code bytes} is not positive, or host memory of that size cannot be had
     * @throws dev.transferengine.exceptions.DeviceUnavailableException if the provider cannot serve or allocate
     */
    @SuppressWarnings("MustBeClosedChecker") // the allocation owns the arena and closes it when freed
    static EngineAllocation allocate(final Device device, final long bytes, final String provider) {
        if (bytes <= 0) {
            throw new InvalidRequestException("an allocation needs a positive size, got " + bytes + " bytes");
        }
        if (device instanceof Device.Cuda cuda) {
            final DeviceMemory memory = DeviceMemory.require(provider, cuda.ordinal());
            return new EngineAllocation(memory.allocate(cuda.ordinal(), bytes), null, memory, cuda.ordinal());
        }
        final Arena arena = Arena.ofShared();
        try {
            return new EngineAllocation(arena.allocate(bytes, HOST_ALIGNMENT), arena, null, -1);
        } catch (final OutOfMemoryError | IllegalArgumentException e) {
            arena.close();
            throw new InvalidRequestException("cannot allocate " + bytes + " bytes of host memory: " + e.getMessage());
        }
    }

    MemorySegment segment() {
        return segment;
    }

    /** Completes once the memory's region is deregistered and nothing touches it; then {@link #free()} is safe. */
    CompletableFuture<Void> drained() {
        return drained;
    }

    /**
     * Frees the memory; later calls do nothing. Any thread; blocks for the driver call.
     *
     * @throws TransferEngineException if the driver or the arena refused; the memory then counts as still allocated
     */
    void free() {
        if (!freed.compareAndSet(false, true)) {
            return;
        }
        try {
            if (arena != null) {
                arena.close();
            } else if (provider != null) {
                provider.free(device, segment.address());
            }
        } catch (final RuntimeException e) {
            freed.set(false);
            throw e instanceof TransferEngineException engineError
                    ? engineError
                    : new TransferEngineException("freeing " + this + " failed: " + e, e);
        }
    }

    @Override
    public String toString() {
        return "engine allocation of " + segment.byteSize() + " bytes at 0x" + Long.toHexString(segment.address())
                + (arena != null ? " (host)" : " (device " + device + ")");
    }
}
