package dev.transferengine.cuda;

import dev.transferengine.spi.StagingBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static jcuda.driver.JCudaDriver.CU_MEMHOSTALLOC_DEVICEMAP;
import static jcuda.driver.JCudaDriver.CU_MEMHOSTALLOC_PORTABLE;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;
import static jcuda.driver.JCudaDriver.cuMemHostGetDevicePointer;

/**
 * Pinned host memory from {@code cuMemHostAlloc(PORTABLE | DEVICEMAP)}: copies to and from any device run at full
 * PCIe speed, and kernels can read and write it through {@link #devicePointer()}. The {@link #segment()} belongs to a
 * shared arena that is closed before the memory is freed, so a late access fails with an exception, not a crash.
 */
final class PinnedBuffer implements StagingBuffer {

    private final CudaDevice device;
    private final RawPointer pointer;
    private final long devicePointer;
    private final Arena arena;
    private final MemorySegment segment;
    private boolean closed;

    @SuppressWarnings("MustBeClosedChecker") // the buffer owns the arena and closes it in close()
    private PinnedBuffer(
            final CudaDevice device, final RawPointer pointer, final long devicePointer, final long byteSize) {
        this.device = device;
        this.pointer = pointer;
        this.devicePointer = devicePointer;
        this.arena = Arena.ofShared();
        this.segment = reinterpret(pointer.address(), byteSize, arena);
    }

    static PinnedBuffer allocate(final CudaDevice device, final long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("pinned allocation needs a positive size, was " + bytes);
        }
        device.makeCurrent();
        final RawPointer pointer = new RawPointer();
        CudaCalls.check(
                cuMemHostAlloc(pointer, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP),
                "cuMemHostAlloc(" + bytes + ", PORTABLE|DEVICEMAP)");
        final RawDevicePointer mapped = new RawDevicePointer();
        final int result = cuMemHostGetDevicePointer(mapped, pointer, 0);
        if (result != 0) {
            cuMemFreeHost(pointer);
            throw CudaCalls.failure(result, "cuMemHostGetDevicePointer");
        }
        return new PinnedBuffer(device, pointer, mapped.address(), bytes);
    }

    @SuppressWarnings("restricted")
    private static MemorySegment reinterpret(final long address, final long byteSize, final Arena arena) {
        return MemorySegment.ofAddress(address).reinterpret(byteSize, arena, null);
    }

    /** The host-accessible memory. */
    @Override
    public MemorySegment segment() {
        return segment;
    }

    /** Where kernels reach this memory (equal to the host address under unified addressing). */
    public long devicePointer() {
        return devicePointer;
    }

    public CudaDevice device() {
        return device;
    }

    /** Closes the segment's arena, then frees the memory. Idempotent; blocks for the driver call. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            arena.close();
            device.makeCurrent();
            CudaCalls.check(cuMemFreeHost(pointer), "cuMemFreeHost");
        }
    }
}
