package dev.transferengine.cuda;

import dev.transferengine.spi.DeviceCopyStream;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.StagingBuffer;

import org.jspecify.annotations.Nullable;

/**
 * The {@code cuda} {@link DeviceMemory}: pinned staging buffers from {@code cuMemHostAlloc} and copy streams with
 * event-based completion. Loads without JCuda on the class path and then reports why it is unavailable.
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
}
