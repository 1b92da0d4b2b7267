package dev.transferengine.moe;

import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.spi.DeviceMemory;

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
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

/**
 * The GPU dispatcher's CUDA calls through JCuda, as a user's CUDA library would make them: device and mapped pinned
 * memory, and the kernels of {@code moe-kernels.ptx} (compiled from {@code src/main/cuda/moe-kernels.cu}, JIT-compiled
 * by the driver when loaded) launched in order on one stream. Works in the device's primary context, which the engine
 * uses too, so pointers pass between them. Not thread-safe: one thread at a time (calls make the context current).
 */
final class MoeGpuKernels implements AutoCloseable {

    private static final String PTX = "moe-kernels.ptx";
    private static final int THREADS = 256;

    private final CUdevice device = new CUdevice();
    private final CUcontext context = new CUcontext();
    private final CUmodule module = new CUmodule();
    private final CUfunction route = new CUfunction();
    private final CUfunction index = new CUfunction();
    private final CUfunction pack = new CUfunction();
    private final CUfunction signal = new CUfunction();
    private final CUfunction combine = new CUfunction();
    private final CUfunction expert = new CUfunction();
    private final CUstream stream = new CUstream();

    /** Retains device {@code ordinal}'s primary context and loads the kernels. Blocks. */
    MoeGpuKernels(final int ordinal) {
        // names what is missing (driver, device) before JCuda's natives fail to load on a machine without a GPU
        DeviceMemory.require(DeviceMemory.DEFAULT, ordinal);
        check(cuInit(0), "cuInit");
        check(cuDeviceGet(device, ordinal), "cuDeviceGet(" + ordinal + ")");
        check(cuDevicePrimaryCtxRetain(context, device), "cuDevicePrimaryCtxRetain(" + ordinal + ")");
        try {
            makeCurrent();
            check(cuModuleLoadData(module, ptx()), "cuModuleLoadData(" + PTX + ")");
            function(route, "moe_route");
            function(index, "moe_index");
            function(pack, "moe_pack");
            function(signal, "moe_signal");
            function(combine, "moe_combine");
            function(expert, "moe_expert");
            check(cuStreamCreate(stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        } catch (final RuntimeException e) {
            cuDevicePrimaryCtxRelease(device);
            throw e;
        }
    }

    /** Makes the context current on the calling thread (CUDA contexts are per thread). */
    void makeCurrent() {
        check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
    }

    /** {@code cuMemAlloc}, zeroed: returns the device pointer. */
    long allocDevice(final long bytes) {
        makeCurrent();
        final Address pointer = new Address();
        check(cuMemAlloc(pointer, bytes), "cuMemAlloc(" + bytes + ")");
        check(cuMemsetD8(pointer, (byte) 0, bytes), "cuMemsetD8");
        return pointer.address();
    }

    void freeDevice(final long address) {
        makeCurrent();
        check(cuMemFree(Address.at(address)), "cuMemFree");
    }

    /** What the engine registers with {@code Device.cuda(n)}: a segment whose address is the device pointer. */
    @SuppressWarnings("restricted") // carries an address and a size only; never dereferenced on the host
    static MemorySegment deviceSegment(final long address, final long bytes) {
        return MemorySegment.ofAddress(address).reinterpret(bytes);
    }

    /** {@code cuMemHostAlloc(PORTABLE | DEVICEMAP)}, zeroed: host memory kernels write through the device pointer. */
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
        final MemorySegment segment = MemorySegment.ofAddress(host.address()).reinterpret(bytes);
        segment.fill((byte) 0);
        return new Mapped(segment, mapped.address(), host);
    }

    void freeMapped(final Mapped memory) {
        makeCurrent();
        check(cuMemFreeHost(memory.pointer()), "cuMemFreeHost");
    }

    /** Queues a copy of {@code bytes} from host memory to the device, ordered before later launches. */
    void upload(final MemorySegment host, final long deviceAddress, final long bytes) {
        makeCurrent();
        check(cuMemcpyHtoDAsync(Address.at(deviceAddress), Pointer.to(host.asByteBuffer()), bytes, stream), "upload");
    }

    /** Copies {@code bytes} from the device to host memory after every earlier launch. Blocks. */
    void download(final long deviceAddress, final MemorySegment host, final long bytes) {
        makeCurrent();
        check(cuMemcpyDtoHAsync(Pointer.to(host.asByteBuffer()), Address.at(deviceAddress), bytes, stream), "download");
        synchronize();
    }

    /** Launches the gate: logits, top-k and weights, one block per token. */
    void route(
            final long tokens,
            final long gate,
            final MoeShape shape,
            final long routeExperts,
            final long routeWeights) {
        launch(
                route,
                shape.tokens(),
                THREADS,
                shape.experts() * (Float.BYTES + 1),
                Pointer.to(
                        ptr(tokens),
                        ptr(gate),
                        Pointer.to(new int[] {shape.hidden()}),
                        Pointer.to(new int[] {shape.experts()}),
                        Pointer.to(new int[] {shape.topK()}),
                        ptr(routeExperts),
                        ptr(routeWeights)));
    }

    /** Launches the counting: headers in the send slots, each (token, slot)'s rank and row, rows per rank. */
    void index(
            final long routeExperts,
            final MoeShape shape,
            final long send,
            final long slotRank,
            final long slotRow,
            final long rowsOfRank) {
        launch(
                index,
                1,
                THREADS,
                indexSharedBytes(shape),
                Pointer.to(
                        ptr(routeExperts),
                        Pointer.to(new int[] {shape.tokens()}),
                        Pointer.to(new int[] {shape.topK()}),
                        Pointer.to(new int[] {shape.experts()}),
                        Pointer.to(new int[] {shape.expertRanks()}),
                        ptr(send),
                        Pointer.to(new long[] {shape.slotBytes()}),
                        ptr(slotRank),
                        ptr(slotRow),
                        ptr(rowsOfRank)));
    }

    /** The counting kernel's shared memory: every (token, slot)'s expert and two ints per expert. */
    static int indexSharedBytes(final MoeShape shape) {
        return Integer.BYTES * (shape.tokens() * shape.topK() + 2 * shape.experts());
    }

    /** Launches the packing of every routed row into its rank's send slot. */
    void pack(final long tokens, final MoeShape shape, final long send, final long slotRank, final long slotRow) {
        launch(
                pack,
                shape.tokens() * shape.topK(),
                THREADS,
                0,
                Pointer.to(
                        ptr(tokens),
                        Pointer.to(new int[] {shape.hidden()}),
                        Pointer.to(new int[] {shape.topK()}),
                        ptr(send),
                        Pointer.to(new long[] {shape.slotBytes()}),
                        Pointer.to(new long[] {shape.headerBytes()}),
                        ptr(slotRank),
                        ptr(slotRow)));
    }

    /** Launches the store of {@code value} into a UVM watcher's slot. */
    void signal(final long slot, final long value) {
        launch(signal, 1, 1, 0, Pointer.to(ptr(slot), Pointer.to(new long[] {value})));
    }

    /** Launches the weighted sum of the expert ranks' outputs into {@code out}, one block per token. */
    void combine(
            final long combineSlots,
            final MoeShape shape,
            final long slotRank,
            final long slotRow,
            final long routeWeights,
            final long out) {
        launch(
                combine,
                shape.tokens(),
                THREADS,
                0,
                Pointer.to(
                        ptr(combineSlots),
                        Pointer.to(new long[] {shape.slotRowBytes()}),
                        Pointer.to(new int[] {shape.hidden()}),
                        Pointer.to(new int[] {shape.topK()}),
                        ptr(slotRank),
                        ptr(slotRow),
                        ptr(routeWeights),
                        ptr(out)));
    }

    /**
     * Launches an expert rank's matmul on {@code rows} rows, one block of {@link ExpertWeights#LANES} threads per row;
     * {@code down} and {@code up} hold {@code weights}' matrices in GPU memory.
     */
    void expert(
            final long in,
            final long out,
            final long rowExpert,
            final long down,
            final long up,
            final int rows,
            final ExpertWeights weights) {
        launch(
                expert,
                rows,
                ExpertWeights.LANES,
                ExpertWeights.LANES * weights.width() * Float.BYTES,
                Pointer.to(
                        ptr(in),
                        ptr(out),
                        ptr(rowExpert),
                        ptr(down),
                        ptr(up),
                        Pointer.to(new int[] {weights.hidden()}),
                        Pointer.to(new int[] {weights.width()})));
    }

    /** Waits until every launch and copy so far ended. Blocks. */
    void synchronize() {
        makeCurrent();
        check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    }

    private void launch(
            final CUfunction function, final int blocks, final int threads, final int sharedBytes, final Pointer args) {
        makeCurrent();
        check(cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, sharedBytes, stream, args, null), "cuLaunchKernel");
    }

    private static Pointer ptr(final long address) {
        return Pointer.to(new long[] {address});
    }

    /** Waits for the stream, destroys it, unloads the module and releases the context. Blocks. */
    @Override
    public void close() {
        makeCurrent();
        cuStreamSynchronize(stream);
        cuStreamDestroy(stream);
        cuModuleUnload(module);
        cuDevicePrimaryCtxRelease(device);
    }

    private void function(final CUfunction function, final String name) {
        check(cuModuleGetFunction(function, module, name), "cuModuleGetFunction(" + name + ")");
    }

    static void check(final int result, final String call) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw new DeviceUnavailableException(call + " failed: " + CUresult.stringFor(result));
        }
    }

    /** The PTX text, NUL-terminated as cuModuleLoadData expects. */
    private static byte[] ptx() {
        try (InputStream in = MoeGpuKernels.class.getResourceAsStream(PTX)) {
            if (in == null) {
                throw new DeviceUnavailableException("kernel resource " + PTX + " is missing from the class path");
            }
            final byte[] text = in.readAllBytes();
            return Arrays.copyOf(text, text.length + 1);
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot read " + PTX, e);
        }
    }

    /**
     * Mapped pinned host memory.
     *
     * @param host the host's view
     * @param devicePointer the kernels' view
     * @param pointer what {@code cuMemFreeHost} takes
     */
    record Mapped(MemorySegment host, long devicePointer, Pointer pointer) {}

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
