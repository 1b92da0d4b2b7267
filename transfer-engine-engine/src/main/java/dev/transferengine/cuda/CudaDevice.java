package dev.transferengine.cuda;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;

/**
 * One CUDA device and its primary context, the context the CUDA runtime (and so PyTorch) uses too, so pointers are
 * shared with them. Obtain with {@link #get(int)}; the context is retained for the life of the JVM.
 *
 * <p>The driver binds a context to a thread: every method here makes the context current on the calling thread
 * first. All methods are thread-safe.
 */
final class CudaDevice {

    private static final ConcurrentMap<Integer, CudaDevice> DEVICES = new ConcurrentHashMap<>();

    private final int ordinal;
    private final CUdevice device;
    private final CUcontext context;
    private final String name;
    /** What a failed {@link #makeCurrent()} names; built once, as the worker's sweep makes it current every ms. */
    private final String setCurrentCall;

    private CudaDevice(final int ordinal) {
        this.ordinal = ordinal;
        this.setCurrentCall = "cuCtxSetCurrent(cuda:" + ordinal + ")";
        this.device = new CUdevice();
        CudaCalls.check(cuDeviceGet(device, ordinal), "cuDeviceGet(" + ordinal + ")");
        this.context = new CUcontext();
        CudaCalls.check(cuDevicePrimaryCtxRetain(context, device), "cuDevicePrimaryCtxRetain(" + ordinal + ")");
        final byte[] raw = new byte[256];
        final int result = cuDeviceGetName(raw, raw.length, device);
        if (result != 0) {
            cuDevicePrimaryCtxRelease(device);
            throw CudaCalls.failure(result, "cuDeviceGetName(" + ordinal + ")");
        }
        int end = 0;
        while (end < raw.length && raw[end] != 0) {
            end++;
        }
        this.name = new String(raw, 0, end, StandardCharsets.US_ASCII);
    }

    /**
     * The device with this ordinal; the first call per device retains its primary context (blocks, ~100 ms).
     *
     * @throws dev.transferengine.exceptions.DeviceUnavailableException if CUDA or that device cannot be used, with the reason
     */
    public static CudaDevice get(final int ordinal) {
        Cuda.ensureDevice(ordinal);
        return DEVICES.computeIfAbsent(ordinal, CudaDevice::new);
    }

    public int ordinal() {
        return ordinal;
    }

    /** The device's name, e.g. {@code NVIDIA H200}. */
    public String name() {
        return name;
    }

    /** Makes this device's primary context current on the calling thread (a cheap driver call). */
    public void makeCurrent() {
        CudaCalls.check(cuCtxSetCurrent(context), setCurrentCall);
    }

    /** Allocates {@code bytes} of device memory. Blocks for the driver call. */
    public DeviceBuffer allocate(final long bytes) {
        return DeviceBuffer.allocate(this, bytes);
    }

    /** Allocates {@code bytes} of pinned host memory, mapped into the device's address space. Blocks. */
    public PinnedBuffer allocatePinned(final long bytes) {
        return PinnedBuffer.allocate(this, bytes);
    }

    /** Waits until all work on this device's context finished. Blocks. */
    public void synchronize() {
        makeCurrent();
        CudaCalls.check(cuCtxSynchronize(), "cuCtxSynchronize(cuda:" + ordinal + ")");
    }

    @Override
    public String toString() {
        return "cuda:" + ordinal + " (" + name + ")";
    }
}
