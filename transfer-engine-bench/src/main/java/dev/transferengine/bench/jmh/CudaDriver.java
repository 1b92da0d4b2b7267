package dev.transferengine.bench.jmh;

import dev.transferengine.exceptions.DeviceUnavailableException;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;

import static jcuda.driver.CUstream_flags.CU_STREAM_NON_BLOCKING;
import static jcuda.driver.JCudaDriver.CU_MEMHOSTALLOC_DEVICEMAP;
import static jcuda.driver.JCudaDriver.CU_MEMHOSTALLOC_PORTABLE;
import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuInit;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;
import static jcuda.driver.JCudaDriver.cuMemHostGetDevicePointer;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

/**
 * The GPU benchmarks' own CUDA calls through JCuda, standing in for the user's CUDA library: device memory to
 * register with {@code Device.cuda(n)}, mapped pinned host memory, and two kernels ({@code bench-kernels.ptx}). The
 * engine does none of this for its users. Works in the device's primary context, which the engine uses too, so
 * pointers pass between them. Only loaded after {@link Gpus#require} passed.
 */
final class CudaDriver implements AutoCloseable {

    private final CUdevice device = new CUdevice();
    private final CUcontext context = new CUcontext();

    private CudaDriver(final int ordinal) {
        check(cuInit(0), "cuInit");
        check(cuDeviceGet(device, ordinal), "cuDeviceGet(" + ordinal + ")");
        check(cuDevicePrimaryCtxRetain(context, device), "cuDevicePrimaryCtxRetain(" + ordinal + ")");
        makeCurrent();
    }

    /** Retains the primary context of device {@code ordinal} and makes it current on this thread. Blocks. */
    static CudaDriver open(final int ordinal) {
        return new CudaDriver(ordinal);
    }

    /** Makes the context current on the calling thread (CUDA contexts are per thread). */
    void makeCurrent() {
        check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    }

    /** {@code cuMemAlloc}: returns the device pointer. */
    long allocDevice(final long bytes) {
        makeCurrent();
        final Address pointer = new Address();
        check(cuMemAlloc(pointer, bytes), "cuMemAlloc(" + bytes + ")");
        return pointer.address();
    }

    void freeDevice(final long address) {
        makeCurrent();
        check(cuMemFree(Address.at(address)), "cuMemFree");
    }

    /** {@code cuMemsetD8}; blocks until done. */
    void fill(final long address, final byte value, final long bytes) {
        makeCurrent();
        check(cuMemsetD8(Address.at(address), value, bytes), "cuMemsetD8");
    }

    /** What {@code TransferEngine.register(segment, Device.cuda(n))} takes: a segment whose address is the pointer. */
    @SuppressWarnings("restricted") // carries an address and a size only; never dereferenced on the host
    static MemorySegment deviceSegment(final long address, final long bytes) {
        return MemorySegment.ofAddress(address).reinterpret(bytes);
    }

    /** {@code cuMemHostAlloc(PORTABLE | DEVICEMAP)}: host memory that kernels read and write through the pointer. */
    @SuppressWarnings("restricted") // the driver's allocation of exactly bytes; freed by freeMapped
    Mapped allocMapped(final long bytes) {
        makeCurrent();
        final HostAddress host = new HostAddress();
        check(cuMemHostAlloc(host, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc");
        final Address mapped = new Address();
        final int result = cuMemHostGetDevicePointer(mapped, host, 0);
        if (result != CUresult.CUDA_SUCCESS) {
            cuMemFreeHost(host);
            check(result, "cuMemHostGetDevicePointer");
        }
        return new Mapped(MemorySegment.ofAddress(host.address()).reinterpret(bytes), mapped.address(), host);
    }

    void freeMapped(final Mapped memory) {
        makeCurrent();
        check(cuMemFreeHost(memory.pointer()), "cuMemFreeHost");
    }

    /** Loads {@code bench-kernels.ptx} (the driver JIT-compiles it) with a stream of its own. Blocks. */
    Kernels loadKernels() {
        makeCurrent();
        return new Kernels(this);
    }

    /** Releases the primary context. */
    @Override
    public void close() {
        cuDevicePrimaryCtxRelease(device);
    }

    static void check(final int result, final String call) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw new DeviceUnavailableException(call + " failed: " + CUresult.stringFor(result));
        }
    }

    /**
     * Mapped pinned host memory.
     *
     * @param host          the host's view
     * @param devicePointer the kernels' view
     * @param pointer       what {@code cuMemFreeHost} takes
     */
    record Mapped(MemorySegment host, long devicePointer, Pointer pointer) {}

    /**
     * {@code te_store} and {@code te_pingpong}, launched {@code <<<1,1>>>} on one stream; launches are asynchronous
     * and, like JCuda's, allocate their parameter arrays. After {@link #close()} every call fails with an
     * {@link IllegalStateException}: the destroyed stream handed to the driver would crash the JVM in libcuda.
     */
    static final class Kernels implements AutoCloseable {

        private static final String PTX = "bench-kernels.ptx";

        private final CudaDriver cuda;
        private final CUmodule module = new CUmodule();
        private final CUfunction store = new CUfunction();
        private final CUfunction pingPong = new CUfunction();
        private final CUstream stream = new CUstream();
        private boolean closed;

        private Kernels(final CudaDriver cuda) {
            this.cuda = cuda;
            check(cuModuleLoadData(module, ptx()), "cuModuleLoadData(" + PTX + ")");
            check(cuModuleGetFunction(store, module, "te_store"), "cuModuleGetFunction(te_store)");
            check(cuModuleGetFunction(pingPong, module, "te_pingpong"), "cuModuleGetFunction(te_pingpong)");
            check(cuStreamCreate(stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        }

        /** Launches {@code *slot = value}. */
        void store(final long slot, final long value) {
            launch(store, Pointer.to(Pointer.to(new long[] {slot}), Pointer.to(new long[] {value})));
        }

        /**
         * Launches a persistent kernel that, for {@code i = 1..count}, waits until {@code *ping == i} and then
         * stores {@code i} into {@code *slot}; it ends when one wait exceeds {@code timeoutNanos}.
         */
        void pingPong(final long ping, final long slot, final long count, final long timeoutNanos) {
            launch(
                    pingPong,
                    Pointer.to(
                            Pointer.to(new long[] {ping}),
                            Pointer.to(new long[] {slot}),
                            Pointer.to(new long[] {count}),
                            Pointer.to(new long[] {timeoutNanos})));
        }

        /** Waits until every launch so far ended. Blocks. */
        synchronized void synchronize() {
            ensureOpen();
            cuda.makeCurrent();
            check(cuStreamSynchronize(stream), "cuStreamSynchronize");
        }

        private synchronized void launch(final CUfunction function, final Pointer parameters) {
            ensureOpen();
            cuda.makeCurrent();
            check(cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, stream, parameters, null), "cuLaunchKernel");
        }

        /** Waits for the stream, then destroys it and unloads the module. Idempotent; blocks. */
        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            cuda.makeCurrent();
            cuStreamSynchronize(stream);
            cuStreamDestroy(stream);
            cuModuleUnload(module);
        }

        private void ensureOpen() {
            if (closed) {
                throw new IllegalStateException("the bench kernels are closed");
            }
        }

        /** The PTX text, NUL-terminated as cuModuleLoadData expects. */
        private static byte[] ptx() {
            try (InputStream in = Kernels.class.getResourceAsStream(PTX)) {
                if (in == null) {
                    throw new IllegalStateException("kernel resource " + PTX + " is missing from the class path");
                }
                final byte[] text = in.readAllBytes();
                return Arrays.copyOf(text, text.length + 1);
            } catch (final IOException e) {
                throw new UncheckedIOException("cannot read " + PTX, e);
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

    /** A host pointer whose address can be read back. */
    private static final class HostAddress extends Pointer {

        long address() {
            return getNativePointer() + getByteOffset();
        }
    }
}
