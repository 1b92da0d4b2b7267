package dev.transferengine.cuda;

import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.spi.DeviceCopyStream;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.StagingBuffer;

import java.lang.foreign.MemorySegment;

import org.jspecify.annotations.Nullable;

/**
 * The {@code cuda} {@link DeviceMemory}: pinned staging buffers from {@code cuMemHostAlloc} and copy streams with
 * event-based completion, and the driver's buffer id of an address for the scope sweep. Loads without JCuda on the
 * class path and then reports why it is unavailable.
 */
public final class CudaDeviceMemory implements DeviceMemory {

    /** Copies a stream keeps in flight before it answers {@link DeviceCopyStream#BUSY}. */
    static final int STREAM_CAPACITY = 64;

    /** For {@link java.util.ServiceLoader}. */
    public CudaDeviceMemory() {}

    @Override
    public String name() {
        return DEFAULT;
    }

    @Override
    public @Nullable String unavailabilityCause() {
        return Cuda.unavailabilityCause();
    }

    @Override
    public int deviceCount() {
        return Cuda.deviceCount();
    }

    @Override
    public StagingBuffer allocateStaging(final int device, final long bytes) {
        return CudaDevice.get(device).allocatePinned(bytes);
    }

    @Override
    public DeviceCopyStream openCopyStream(final int device) {
        return new CudaCopyStream(CudaDevice.get(device), STREAM_CAPACITY);
    }

    /** {@code cuMemAlloc}, with the device's context current. */
    @Override
    public MemorySegment allocate(final int device, final long bytes) {
        return DeviceBuffer.allocate(CudaDevice.get(device), bytes).segment();
    }

    /** {@code cuMemFree}, with the device's context current. */
    @Override
    public void free(final int device, final long address) {
        DeviceBuffer.free(CudaDevice.get(device), address);
    }

    /** {@code cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_BUFFER_ID)}: one driver call, with the context current. */
    @Override
    public long allocationId(final int device, final long address) {
        try {
            return CudaBufferIds.of(CudaDevice.get(device), address);
        } catch (final DeviceUnavailableException e) {
            return UNKNOWN_ALLOCATION;
        }
    }
}
