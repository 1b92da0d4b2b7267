package dev.transferengine.bench;

import dev.transferengine.Device;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.spi.DeviceMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUresult;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuInit;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemsetD8;

/**
 * The memory of a bench region on {@code --device}: host memory from the caller's arena, or GPU memory that te-bench
 * allocates itself (JCuda, in the device's primary context, which the engine uses too), as a user's CUDA library
 * would; freed on close. With {@code --huge-pages}, host memory is a mapping that transparent huge pages may back
 * ({@link HugePages}), and the region knows how much of it they do.
 *
 * @param segment what {@link dev.transferengine.TransferEngine#register} takes; for GPU memory its address is the
 *     device pointer and the host never touches it
 * @param device  the device the memory is on
 */
record RegionMemory(MemorySegment segment, Device device) implements AutoCloseable {

    /**
     * {@code bytes} on {@code device}, every byte {@code fill}. Blocks for GPU memory (context, allocation, fill).
     *
     * @throws DeviceUnavailableException if the GPU cannot be used, with the reason
     */
    static RegionMemory allocate(final Arena arena, final Device device, final long bytes, final byte fill) {
        return allocate(arena, device, bytes, fill, false);
    }

    /**
     * {@code bytes} on {@code device}, every byte {@code fill}; with {@code hugePages} host memory advised
     * {@code MADV_HUGEPAGE} before the fill first touches it. Blocks for GPU memory and the system calls.
     *
     * @throws DeviceUnavailableException   if the GPU cannot be used, with the reason
     * @throws HugePages.UnavailableException if huge pages are asked for GPU memory, off Linux, or madvise fails
     */
    static RegionMemory allocate(
            final Arena arena, final Device device, final long bytes, final byte fill, final boolean hugePages) {
        if (hugePages) {
            requireHost(device);
        }
        return switch (device) {
            case Device.Host host -> {
                final MemorySegment segment =
                        hugePages ? HugePages.allocate(arena, bytes) : arena.allocate(bytes, 4096);
                segment.fill(fill);
                yield new RegionMemory(segment, host);
            }
            case Device.Cuda cuda -> new RegionMemory(gpu(cuda.ordinal(), bytes, fill), cuda);
        };
    }

    /**
     * Refuses huge pages for anything but host memory (GPU memory is the driver's).
     *
     * @throws HugePages.UnavailableException for a GPU device
     */
    static void requireHost(final Device device) {
        if (device instanceof Device.Cuda cuda) {
            throw new HugePages.UnavailableException("--huge-pages is for host regions; --device " + cuda
                    + " allocates GPU memory, whose pages the CUDA driver chooses");
        }
    }

    /** The bytes of this host region that huge pages back now ({@code AnonHugePages}, /proc/self/smaps). Blocks. */
    long hugePageBytes() {
        return HugePages.backedBytes(segment);
    }

    @SuppressWarnings("restricted") // the driver's allocation of exactly bytes; never dereferenced on the host
    private static MemorySegment gpu(final int ordinal, final long bytes, final byte fill) {
        DeviceMemory.require(DeviceMemory.DEFAULT, ordinal); // names what is missing on a machine without a GPU
        final CUdevice device = device(ordinal);
        final CUcontext context = new CUcontext();
        // held until close: a primary context whose last holder lets go is destroyed with its memory
        check(cuDevicePrimaryCtxRetain(context, device), "cuDevicePrimaryCtxRetain(" + ordinal + ")");
        try {
            check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
            final Address pointer = new Address();
            check(cuMemAlloc(pointer, bytes), "cuMemAlloc(" + bytes + ")");
            final int filled = cuMemsetD8(pointer, fill, bytes);
            if (filled != CUresult.CUDA_SUCCESS) {
                cuMemFree(pointer);
                check(filled, "cuMemsetD8");
            }
            return MemorySegment.ofAddress(pointer.address()).reinterpret(bytes);
        } catch (final RuntimeException e) {
            cuDevicePrimaryCtxRelease(device);
            throw e;
        }
    }

    private static CUdevice device(final int ordinal) {
        check(cuInit(0), "cuInit");
        final CUdevice device = new CUdevice();
        check(cuDeviceGet(device, ordinal), "cuDeviceGet(" + ordinal + ")");
        return device;
    }

    private static void check(final int result, final String call) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw new DeviceUnavailableException(call + " failed: " + CUresult.stringFor(result));
        }
    }

    /** Frees GPU memory and lets go of the context (host memory goes with its arena). */
    @Override
    public void close() {
        if (device instanceof Device.Cuda cuda) {
            final CUdevice gpu = device(cuda.ordinal());
            final CUcontext context = new CUcontext();
            check(cuDevicePrimaryCtxRetain(context, gpu), "cuDevicePrimaryCtxRetain(" + cuda.ordinal() + ")");
            try {
                check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
                check(cuMemFree(Address.at(segment.address())), "cuMemFree");
            } finally {
                cuDevicePrimaryCtxRelease(gpu); // this call's hold
                cuDevicePrimaryCtxRelease(gpu); // allocate's hold
            }
        }
    }

    /** A device pointer whose address can be read back, and one made from a plain address. */
    private static final class Address extends CUdeviceptr {

        private static final CUdeviceptr NULL = new CUdeviceptr();

        long address() {
            return getNativePointer() + getByteOffset();
        }

        /** JCuda passes {@code nativePointer + byteOffset} to the driver: an offset from NULL is the address. */
        static CUdeviceptr at(final long address) {
            return NULL.withByteOffset(address);
        }
    }
}
