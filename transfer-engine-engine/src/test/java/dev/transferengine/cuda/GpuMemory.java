package dev.transferengine.cuda;

import java.lang.foreign.MemorySegment;

/**
 * GPU memory for tests outside this package (which cannot reach {@link CudaDevice}): an allocation on one device,
 * with synchronous copies to and from host memory.
 */
public final class GpuMemory implements AutoCloseable {

    private final DeviceBuffer buffer;

    private GpuMemory(final DeviceBuffer buffer) {
        this.buffer = buffer;
    }

    /** Whether a GPU can be used here; {@link #unavailabilityCause()} says why not. */
    public static boolean isAvailable() {
        return Cuda.isAvailable();
    }

    /** Why no GPU can be used here, or null. */
    public static String unavailabilityCause() {
        return String.valueOf(Cuda.unavailabilityCause());
    }

    /** {@code bytes} of zeroed memory on GPU {@code ordinal}. Blocks. */
    public static GpuMemory allocate(final int ordinal, final long bytes) {
        final DeviceBuffer buffer = CudaDevice.get(ordinal).allocate(bytes);
        buffer.fill((byte) 0);
        return new GpuMemory(buffer);
    }

    /** The segment to register with {@code Device.cuda(n)}: its address is the device pointer; never dereference it. */
    public MemorySegment segment() {
        return buffer.segment();
    }

    /** Copies all of {@code host} to the start of this memory. Blocks. */
    public void copyFromHost(final MemorySegment host) {
        buffer.copyFromHost(host);
    }

    /** Copies the start of this memory into all of {@code host}. Blocks. */
    public void copyToHost(final MemorySegment host) {
        buffer.copyToHost(host);
    }

    @Override
    public void close() {
        buffer.close();
    }
}
