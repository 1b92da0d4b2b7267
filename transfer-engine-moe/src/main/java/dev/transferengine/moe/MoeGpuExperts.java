package dev.transferengine.moe;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * An expert rank's experts computed by a GPU kernel ({@code moe_expert} in {@code moe-kernels.cu}): the weights of the
 * rank's experts live in GPU memory, and each {@link #compute} copies the received rows to the GPU, runs one block per
 * row and copies the outputs back into the rank's (host) region. The kernel sums in {@link ExpertWeights}' order with
 * round-to-nearest and no fused multiply-add, so the outputs are the CPU reference's bytes. One thread at a time; the
 * caller closes it after the rank that uses it.
 */
public final class MoeGpuExperts implements ExpertCompute, AutoCloseable {

    /** The widest R whose per-row partial sums fit a block's shared memory (LANES x R floats, 32 KiB). */
    static final int MAX_WIDTH = 32;

    private final MoeGpuKernels gpu;
    private final ExpertWeights weights;
    private final int maxRows;
    private final List<Long> allocations = new ArrayList<>();
    private final long down;
    private final long up;
    private final long in;
    private final long out;
    private final long rowExpert;
    private final Arena arena = Arena.ofShared();
    /** Each row's expert, host side, uploaded per call. */
    private final MemorySegment rowExpertHost;

    /**
     * Loads the kernels on GPU {@code device} and copies the weights of an expert rank's experts into GPU memory.
     * Blocks for the driver calls.
     *
     * @param model the model (its shape and expert weights)
     * @param expertRank the rank whose experts this computes, 0..E-1
     * @param device the CUDA device ordinal
     * @throws dev.transferengine.exceptions.DeviceUnavailableException if the GPU cannot serve it
     * @throws IllegalArgumentException if the rank is out of range or the experts' width exceeds 32
     */
    public MoeGpuExperts(final MoeModel model, final int expertRank, final int device) {
        this.weights = model.expertsOfRank(expertRank);
        if (weights.width() > MAX_WIDTH) {
            throw new IllegalArgumentException(
                    "the GPU experts take a width up to " + MAX_WIDTH + ", was " + weights.width());
        }
        final MoeShape shape = model.shape();
        this.maxRows = shape.maxRowsPerRank();
        final long matrixFloats = (long) weights.hidden() * weights.width();
        @Nullable MoeGpuKernels kernels = null;
        try {
            kernels = new MoeGpuKernels(device);
            this.gpu = kernels;
            this.down = allocate(Float.BYTES * matrixFloats * weights.count());
            this.up = allocate(Float.BYTES * matrixFloats * weights.count());
            this.in = allocate(maxRows * shape.rowBytes());
            this.out = allocate(maxRows * shape.rowBytes());
            this.rowExpert = allocate((long) Integer.BYTES * maxRows);
            this.rowExpertHost = arena.allocate((long) Integer.BYTES * maxRows);
            try (Arena upload = Arena.ofConfined()) {
                final MemorySegment a = upload.allocate(Float.BYTES * matrixFloats * weights.count());
                final MemorySegment b = upload.allocate(Float.BYTES * matrixFloats * weights.count());
                for (int e = 0; e < weights.count(); e++) {
                    final long at = Float.BYTES * matrixFloats * e;
                    MemorySegment.copy(weights.down(e), 0, a, ValueLayout.JAVA_FLOAT, at, (int) matrixFloats);
                    MemorySegment.copy(weights.up(e), 0, b, ValueLayout.JAVA_FLOAT, at, (int) matrixFloats);
                }
                gpu.upload(a, down, a.byteSize());
                gpu.upload(b, up, b.byteSize());
                gpu.synchronize();
            }
        } catch (final RuntimeException e) {
            if (kernels != null) {
                free(kernels);
            }
            arena.close();
            throw e;
        }
    }

    private long allocate(final long bytes) {
        final long address = gpu.allocDevice(bytes);
        allocations.add(address);
        return address;
    }

    @Override
    public boolean holds(final int expert) {
        return weights.holds(expert);
    }

    /**
     * Copies the rows to the GPU, computes them there and copies the outputs back. Blocks until they are in {@code
     * out}.
     */
    @Override
    public void compute(
            final int firstExpert,
            final int[] counts,
            final MemorySegment inRows,
            final long inOffset,
            final MemorySegment outRows,
            final long outOffset) {
        int rows = 0;
        for (int le = 0; le < counts.length; le++) {
            if (counts[le] > 0 && !weights.holds(firstExpert + le)) {
                throw new IllegalArgumentException("expert " + (firstExpert + le) + " is not among experts "
                        + weights.first() + ".." + (weights.first() + weights.count() - 1));
            }
            if (counts[le] < 0 || counts[le] > maxRows - rows) {
                throw new IllegalArgumentException(
                        "the counts " + java.util.Arrays.toString(counts) + " exceed " + maxRows + " rows");
            }
            for (int i = 0; i < counts[le]; i++) {
                rowExpertHost.setAtIndex(ValueLayout.JAVA_INT, rows + i, firstExpert + le - weights.first());
            }
            rows += counts[le];
        }
        if (rows == 0) {
            return;
        }
        final long bytes = 2L * rows * weights.hidden();
        gpu.upload(rowExpertHost, rowExpert, (long) Integer.BYTES * rows);
        gpu.upload(inRows.asSlice(inOffset, bytes), in, bytes);
        gpu.expert(in, out, rowExpert, down, up, rows, weights);
        gpu.download(out, outRows.asSlice(outOffset, bytes), bytes);
    }

    /** Frees the GPU memory and releases the context. Blocks until the GPU is done. */
    @Override
    public void close() {
        try {
            free(gpu);
        } finally {
            arena.close();
        }
    }

    private void free(final MoeGpuKernels kernels) {
        try {
            kernels.synchronize();
            allocations.forEach(kernels::freeDevice);
        } finally {
            kernels.close();
        }
    }
}
