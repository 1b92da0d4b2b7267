package dev.transferengine.cuda;

import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.exceptions.EngineClosedException;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;

import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

import static jcuda.driver.CUstream_flags.CU_STREAM_NON_BLOCKING;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

/**
 * The small kernels that bump UVM watcher slots from the GPU (hand-written PTX, {@code watcher-kernels.ptx}, JIT
 * compiled by the driver when loaded), launched {@code <<<1,1>>>} on a stream of their own. For tests, benchmarks
 * and demos; production kernels store into {@link dev.transferengine.UvmWatcher#devicePointer()} themselves.
 *
 * <p>Launches are asynchronous and thread-safe; {@link #synchronize()} waits for them. After {@link #close()} every
 * call fails with an {@link EngineClosedException}: a destroyed stream handed to the driver would crash the process.
 */
final class WatcherKernels implements AutoCloseable {

    private static final String PTX = "watcher-kernels.ptx";

    private final CudaDevice device;
    private final CUmodule module;
    private final CUfunction store;
    private final CUfunction increment;
    private final CUfunction pingPong;
    private final CUstream stream;
    private boolean closed;

    private WatcherKernels(final CudaDevice device) {
        this.device = device;
        device.makeCurrent();
        this.module = new CUmodule();
        CudaCalls.check(cuModuleLoadData(module, ptx()), "cuModuleLoadData(" + PTX + ")");
        this.store = function("te_store");
        this.increment = function("te_increment");
        this.pingPong = function("te_pingpong");
        this.stream = new CUstream();
        CudaCalls.check(cuStreamCreate(stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    }

    /**
     * Loads the kernels on {@code device} (the driver JIT-compiles them: ~20 ms the first time) and warms the launch
     * path up once. Blocks.
     */
    public static WatcherKernels load(final CudaDevice device) {
        final WatcherKernels kernels = new WatcherKernels(device);
        try (PinnedBuffer scratch = device.allocatePinned(Long.BYTES)) {
            kernels.store(scratch.devicePointer(), 1);
            kernels.synchronize();
        } catch (final RuntimeException e) {
            kernels.close();
            throw e;
        }
        return kernels;
    }

    public CudaDevice device() {
        return device;
    }

    /** Launches {@code *slot = value}. */
    public void store(final long slot, final long value) {
        launch(store, Pointer.to(Pointer.to(new long[] {slot}), Pointer.to(new long[] {value})));
    }

    /** Launches one thread that adds 1 to {@code *slot}, {@code times} times, back to back. */
    public void increment(final long slot, final long times) {
        launch(increment, Pointer.to(Pointer.to(new long[] {slot}), Pointer.to(new long[] {times})));
    }

    /**
     * Launches a persistent kernel that, for {@code i = 1..count}, waits until {@code *ping == i} and then stores
     * {@code i} into {@code *slot}; it gives up when one wait exceeds {@code timeoutNanos}.
     */
    public void pingPong(final long ping, final long slot, final long count, final long timeoutNanos) {
        launch(
                pingPong,
                Pointer.to(
                        Pointer.to(new long[] {ping}),
                        Pointer.to(new long[] {slot}),
                        Pointer.to(new long[] {count}),
                        Pointer.to(new long[] {timeoutNanos})));
    }

    /** Waits until every launch so far finished. Blocks. */
    public synchronized void synchronize() {
        ensureOpen();
        device.makeCurrent();
        CudaCalls.check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    }

    /** The stream the kernels run on (to capture them into a CUDA graph). */
    CUstream stream() {
        return stream;
    }

    /** Waits for the launches, then destroys the stream and unloads the module. Idempotent; blocks. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        device.makeCurrent();
        cuStreamSynchronize(stream);
        cuStreamDestroy(stream);
        cuModuleUnload(module);
    }

    private synchronized void launch(final CUfunction function, final Pointer parameters) {
        ensureOpen();
        device.makeCurrent();
        CudaCalls.check(cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, stream, parameters, null), "cuLaunchKernel");
    }

    private void ensureOpen() {
        if (closed) {
            throw new EngineClosedException("the watcher kernels on " + device + " are closed");
        }
    }

    private CUfunction function(final String name) {
        final CUfunction function = new CUfunction();
        CudaCalls.check(cuModuleGetFunction(function, module, name), "cuModuleGetFunction(" + name + ")");
        return function;
    }

    /** The PTX text, NUL-terminated as cuModuleLoadData expects. */
    private static byte[] ptx() {
        try (InputStream in = WatcherKernels.class.getResourceAsStream(PTX)) {
            if (in == null) {
                throw new DeviceUnavailableException("kernel resource " + PTX + " is missing from the class path");
            }
            final byte[] text = in.readAllBytes();
            return Arrays.copyOf(text, text.length + 1);
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot read " + PTX, e);
        }
    }
}
