package dev.transferengine.cuda;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;

/**
 * Device memory from {@code cuMemAlloc}. {@link #segment()} is what {@code TransferEngine.register(segment,
 * Device.cuda(n))} takes: a segment whose address is the device pointer. It must not be read or written from the
 * host; copy with {@link #copyFromHost} and {@link #copyToHost}.
 */
final class DeviceBuffer implements AutoCloseable {

    private final CudaDevice device;
    private final RawDevicePointer pointer;
    private final long byteSize;
    private final MemorySegment segment;
    private final AtomicBoolean closed = new AtomicBoolean();

    private DeviceBuffer(final CudaDevice device, final RawDevicePointer pointer, final long byteSize) {
        this.device = device;
        this.pointer = pointer;
        this.byteSize = byteSize;
        this.segment = DeviceSegments.of(pointer.address(), byteSize);
    }

    static DeviceBuffer allocate(final CudaDevice device, final long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("device allocation needs a positive size, was " + bytes);
        }
        device.makeCurrent();
        final RawDevicePointer pointer = new RawDevicePointer();
        CudaCalls.check(cuMemAlloc(pointer, bytes), "cuMemAlloc(" + bytes + ") on " + device);
        return new DeviceBuffer(device, pointer, bytes);
    }

    public CudaDevice device() {
        return device;
    }

    /** The device pointer. */
    public long devicePointer() {
        return pointer.address();
    }

    public long byteSize() {
        return byteSize;
    }

    /** A segment carrying the device pointer and size, for registration; not host-accessible. */
    public MemorySegment segment() {
        return segment;
    }

    /** Copies {@code host} (any host memory) to the start of this buffer. Blocks until done. */
    public void copyFromHost(final MemorySegment host) {
        checkFits(host.byteSize());
        device.makeCurrent();
        CudaCalls.check(cuMemcpyHtoD(pointer, new RawPointer(host.address()), host.byteSize()), "cuMemcpyHtoD");
    }

    /** Copies the start of this buffer into {@code host} (its whole size). Blocks until done. */
    public void copyToHost(final MemorySegment host) {
        checkFits(host.byteSize());
        device.makeCurrent();
        CudaCalls.check(cuMemcpyDtoH(new RawPointer(host.address()), pointer, host.byteSize()), "cuMemcpyDtoH");
    }

    /** Sets every byte to {@code value}. Blocks until done. */
    public void fill(final byte value) {
        device.makeCurrent();
        CudaCalls.check(cuMemsetD8(pointer, value, byteSize), "cuMemsetD8");
    }

    /** Frees the memory. Idempotent; blocks for the driver call. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            device.makeCurrent();
            CudaCalls.check(cuMemFree(pointer), "cuMemFree");
        }
    }

    /** Frees memory {@link #allocate} returned, by its device pointer alone. Blocks for the driver call. */
    static void free(final CudaDevice device, final long address) {
        device.makeCurrent();
        CudaCalls.check(cuMemFree(RawDevicePointer.at(address)), "cuMemFree(0x" + Long.toHexString(address) + ")");
    }

    private void checkFits(final long bytes) {
        if (closed.get()) {
            throw new IllegalStateException("device buffer " + this + " is closed");
        }
        if (bytes > byteSize) {
            throw new IllegalArgumentException("copy of " + bytes + " bytes does not fit " + this);
        }
    }

    @Override
    public String toString() {
        return "DeviceBuffer[" + device + ", 0x" + Long.toHexString(pointer.address()) + ", " + byteSize + " bytes]";
    }
}
