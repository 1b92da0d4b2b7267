package dev.transferengine.moe;

import dev.transferengine.Device;
import dev.transferengine.PeerGroup;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.ScatterTarget;
import dev.transferengine.ScatterWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.UvmWatcher;
import dev.transferengine.exceptions.DeviceUnavailableException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

/**
 * The GPU-initiated dispatcher, as the paper runs MoE dispatch: per layer, kernels on the GPU compute the routing (the
 * gate's logits, top-k and weights per token, counts per expert) from the tokens in GPU memory, pack the routed rows
 * into the send slots in GPU memory, and store the layer into a UVM watcher's slot; the engine's callback thread, the
 * host proxy, sees the store, reads the rows per expert rank from mapped host memory and posts each rank's header (the
 * counts) and rows as one scatter from GPU memory over the peer group of expert ranks (FI_HMEM on fabric where the
 * provider offers it, staged through pinned host memory by the tcp transport; see docs/gpu.md). The expert ranks
 * ({@link MoeExpertRank}) write their outputs back into GPU memory, a kernel sums them with the gate weights, and the
 * layer ends with the barrier. The layer's output is the next layer's input, on the GPU.
 *
 * <p>Region: the layout of {@link MoeDispatcher}'s, so expert ranks serve both alike; GPU memory registered with
 * {@link Device#cuda(int)}, or, where the engine cannot register GPU memory (a fabric provider without FI_HMEM, such as
 * libfabric's tcp), staged: mapped pinned host memory registered as host memory, which the kernels pack the rows into
 * and sum the outputs from through its device pointer ({@link #staged()}). One thread drives a dispatcher; not
 * thread-safe.
 */
public final class MoeGpuDispatcher implements AutoCloseable {

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;

    /** Shared memory a block may use without opting in to more. */
    private static final int MAX_SHARED_BYTES = 48 * 1024;

    private final MoeShape shape;
    private final Duration layerTimeout;
    private final MoeGpuKernels gpu;
    /** Where the kernels address the region: GPU memory, or the staging memory's device pointer. */
    private final long regionAddress;
    /** The staging memory where the engine refused GPU memory, else null. */
    private final MoeGpuKernels.@Nullable Mapped staging;

    private final long combineOffset;
    private final long gate;
    private final List<Long> allocations = new ArrayList<>();
    private final long[] tokens = new long[2];
    /** Mapped host memory: the rows per expert rank, which the GPU writes and the host proxy reads. */
    private final MoeGpuKernels.Mapped mapped;
    /** Device addresses of the routing's four arrays, T x k each: experts, weights, rank and row of each copy. */
    private final long routeExperts;

    private final long routeWeights;
    private final long slotRank;
    private final long slotRow;

    private final RankLink link;
    private final UvmWatcher watcher;
    private @Nullable PeerGroup experts;
    private List<RegionDescriptor> expertRegions = List.of();
    private int input;
    private volatile @Nullable Proxy pending;

    /** What the host proxy did for one layer. */
    private record Posted(long seenNanos, long postedNanos, CompletableFuture<Void> rows, long bytes) {}

    /** A layer the host proxy is to post when the watcher shows it. */
    private record Proxy(long layer, CompletableFuture<Posted> posted) {}

    /** The registered region and where the kernels address it. */
    private record Region(RankLink link, long deviceAddress, MoeGpuKernels.@Nullable Mapped staging) {}

    /**
     * A GPU dispatcher on an engine the caller owns: loads the kernels on GPU {@code device}, allocates its GPU memory
     * (region, two token buffers, the gate) and mapped host memory (the routing), registers the region (GPU memory, or
     * staging memory where the engine refuses GPU memory) and allocates a UVM watcher. Blocks for the driver calls.
     *
     * @param engine the engine (stays open on {@link #close()}); its main group (0) serves the GPU ({@code
     *     GroupSpec.withCudaDevice(device)}) and it has UVM watchers
     * @param model the model (its shape and gate)
     * @param index this dispatcher's index, 0..D-1
     * @param device the CUDA device ordinal
     * @param layerTimeout how long a layer may wait for a silent peer or the GPU before it fails
     * @throws dev.transferengine.exceptions.DeviceUnavailableException if the GPU or the engine cannot serve it
     * @throws IllegalArgumentException if the index or timeout is out of range, the engine's main group does not serve
     *     the GPU, or the shape needs more shared memory
     *     than a block has (T x k + 2X ints, or 5X bytes, over 48 KiB)
     */
    public MoeGpuDispatcher(
            final TransferEngine engine,
            final MoeModel model,
            final int index,
            final int device,
            final Duration layerTimeout) {
        this.shape = model.shape();
        if (MoeGpuKernels.indexSharedBytes(shape) > MAX_SHARED_BYTES
                || (long) shape.experts() * (Float.BYTES + 1) > MAX_SHARED_BYTES) {
            throw new IllegalArgumentException("T x k = " + shape.tokens() * shape.topK() + " slots and X = "
                    + shape.experts() + " experts exceed the kernels' " + MAX_SHARED_BYTES + " B of shared memory");
        }
        this.layerTimeout = layerTimeout;
        this.gpu = new MoeGpuKernels(device);
        this.combineOffset = shape.expertRanks() * shape.slotBytes();
        final long regionBytes = combineOffset + shape.expertRanks() * shape.slotRowBytes();
        final int slots = shape.tokens() * shape.topK();
        MoeGpuKernels.@Nullable Mapped rows = null;
        @Nullable Region registered = null;
        try {
            rows = gpu.allocMapped(4L * shape.expertRanks());
            this.tokens[0] = allocate(shape.tokens() * shape.rowBytes());
            this.tokens[1] = allocate(shape.tokens() * shape.rowBytes());
            this.gate = allocate((long) Float.BYTES * model.gate().length);
            // the routing stays in GPU memory (the kernels read it); only the rows per rank go to the host proxy
            this.routeExperts = allocate(16L * slots);
            this.routeWeights = routeExperts + 4L * slots;
            this.slotRank = routeExperts + 8L * slots;
            this.slotRow = routeExperts + 12L * slots;
            try (Arena arena = Arena.ofConfined()) {
                final MemorySegment host = arena.allocate((long) Float.BYTES * model.gate().length);
                MemorySegment.copy(model.gate(), 0, host, ValueLayout.JAVA_FLOAT, 0, model.gate().length);
                gpu.upload(host, gate, host.byteSize());
                gpu.synchronize();
            }
            registered = register(engine, index, device, regionBytes);
            if (registered.link().region.group() != 0) {
                throw new IllegalArgumentException("the engine registered GPU " + device + "'s region on group "
                        + registered.link().region.group() + ", but peer groups resolve on group 0: make the group"
                        + " that serves the GPU (GroupSpec.withCudaDevice) the engine's first");
            }
            this.watcher = engine.allocUvmWatcher(this::onSignal);
        } catch (final RuntimeException e) {
            if (registered != null) {
                registered.link().close();
            }
            freeGpu(rows, registered == null ? null : registered.staging());
            throw e;
        }
        this.mapped = java.util.Objects.requireNonNull(rows);
        this.link = registered.link();
        this.regionAddress = registered.deviceAddress();
        this.staging = registered.staging();
    }

    /** This dispatcher's link to the expert ranks over {@code memory}, its region. */
    private RankLink link(final TransferEngine engine, final int index, final RankLink.RankMemory memory) {
        return new RankLink(engine, shape, ExchangeMode.ROUTED, MoeRole.DISPATCHER, index, memory, layerTimeout);
    }

    /**
     * Registers the region in GPU memory; where the engine refuses GPU memory (a fabric provider without FI_HMEM cannot
     * stage, as a one-sided write into a host mirror would land unnoticed), registers mapped pinned host memory
     * instead: the kernels write and read it through its device pointer, so the staging is this dispatcher's and every
     * write into it is one it waits for.
     */
    private Region register(final TransferEngine engine, final int index, final int device, final long regionBytes) {
        final long gpuRegion = allocate(regionBytes);
        try {
            return new Region(
                    link(
                            engine,
                            index,
                            new RankLink.RankMemory(
                                    MoeGpuKernels.deviceSegment(gpuRegion, regionBytes), Device.cuda(device), null)),
                    gpuRegion,
                    null);
        } catch (final DeviceUnavailableException refused) {
            allocations.remove(gpuRegion);
            gpu.freeDevice(gpuRegion);
        }
        final MoeGpuKernels.Mapped host = gpu.allocMapped(regionBytes);
        try {
            return new Region(
                    link(engine, index, new RankLink.RankMemory(host.host(), Device.host(), null)),
                    host.devicePointer(),
                    host);
        } catch (final RuntimeException e) {
            gpu.freeMapped(host);
            throw e;
        }
    }

    /**
     * Whether the region is staged: mapped pinned host memory, because the engine refused to register GPU memory.
     *
     * @return true if staged, false if the engine moves the GPU memory itself (FI_HMEM, or the tcp transport's staging)
     */
    public boolean staged() {
        return staging != null;
    }

    private long allocate(final long bytes) {
        final long address = gpu.allocDevice(bytes);
        allocations.add(address);
        return address;
    }

    /** Frees the GPU and mapped memory and releases the context. */
    private void freeGpu(final MoeGpuKernels.@Nullable Mapped rows, final MoeGpuKernels.@Nullable Mapped region) {
        try {
            gpu.synchronize();
            allocations.forEach(gpu::freeDevice);
            if (rows != null) {
                gpu.freeMapped(rows);
            }
            if (region != null) {
                gpu.freeMapped(region);
            }
        } finally {
            gpu.close();
        }
    }

    /**
     * This dispatcher's region, for every other rank's {@link MoePeers}.
     *
     * @return the descriptor
     */
    public RegionDescriptor descriptor() {
        return link.region.descriptor();
    }

    /**
     * Resolves the peers once, as {@link MoeDispatcher#connect} does. Blocks while the engine resolves them.
     *
     * @param peers every rank's descriptor
     * @throws IllegalArgumentException if the peers do not match the shape
     */
    public void connect(final MoePeers peers) {
        experts = link.connect(peers, peers.experts(), MoeImms.COMBINE);
        expertRegions = peers.experts();
    }

    /**
     * Copies the first layer's input into GPU memory. Blocks until copied.
     *
     * @param tokensIn T x H bf16 from offset 0, native memory
     */
    public void load(final MemorySegment tokensIn) {
        gpu.upload(tokensIn, tokens[input], shape.tokens() * shape.rowBytes());
        gpu.synchronize();
    }

    /**
     * Copies the last layer's output (the next layer's input) out of GPU memory. Blocks.
     *
     * @param out T x H bf16, written from offset 0, native memory
     */
    public void output(final MemorySegment out) {
        gpu.download(tokens[input], out, shape.tokens() * shape.rowBytes());
    }

    /**
     * The routing the GPU computed in the last layer. Blocks for the copy.
     *
     * @return it, copied out of GPU memory
     */
    public TokenRouting routing() {
        final int slots = shape.tokens() * shape.topK();
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment host = arena.allocate(8L * slots);
            gpu.download(routeExperts, host, 8L * slots); // experts, then weights
            final int[] chosen = new int[slots];
            final float[] weights = new float[slots];
            for (int s = 0; s < slots; s++) {
                chosen[s] = host.get(INT, 4L * s);
                weights[s] = host.get(FLOAT, 4L * (slots + s));
            }
            return new TokenRouting(shape.tokens(), shape.topK(), chosen, weights);
        }
    }

    /**
     * Runs one layer on the GPU's current input: route, pack and signal on the GPU, post from the watcher's callback,
     * wait for the combine, sum on the GPU, barrier. Blocks until the layer's barrier passed.
     *
     * @param layer the layer number (consecutive per run, the same on every rank)
     * @return what this dispatcher measured
     * @throws MoeRankFailedException naming the rank if a peer died or stayed silent, or the GPU did not signal, within
     *     the layer timeout
     */
    public GpuLayerTimings runLayer(final int layer) {
        try {
            return layer(layer);
        } catch (final MoeRankFailedException e) {
            link.abort(e);
            throw e;
        }
    }

    private GpuLayerTimings layer(final int layer) {
        if (experts == null) {
            throw new IllegalStateException(MoeRole.DISPATCHER.name(link.index) + " is not connected");
        }
        final long in = tokens[input];
        final long out = tokens[1 - input];
        final long send = regionAddress;
        final Proxy proxy = new Proxy(layer + 1L, new CompletableFuture<>());
        pending = proxy;
        final long start = System.nanoTime();
        gpu.route(in, gate, shape, routeExperts, routeWeights);
        gpu.index(routeExperts, shape, send, slotRank, slotRow, mapped.devicePointer());
        gpu.pack(in, shape, send, slotRank, slotRow);
        gpu.signal(watcher.devicePointer(), layer + 1L);
        final Posted posted = awaitProxy(proxy, layer);
        link.complete(posted.rows(), layer, MoeRole.EXPERT, "dispatching the tokens");
        final long dispatched = System.nanoTime();
        for (int e = 0; e < shape.expertRanks(); e++) {
            // a rank that got no rows writes nothing back (MoeExpertRank); the barrier still hears from it
            if (mapped.host().get(INT, 4L * e) > 0) {
                link.awaitFrom(
                        link.counter(MoeImms.of(MoeImms.COMBINE, layer, e)), 1, MoeRole.EXPERT, e, layer, "combine");
            }
        }
        final long arrived = System.nanoTime();
        gpu.combine(regionAddress + combineOffset, shape, slotRank, slotRow, routeWeights, out);
        gpu.synchronize();
        final long combined = System.nanoTime();
        input = 1 - input;
        link.barrier(layer);
        final long end = System.nanoTime();
        return new GpuLayerTimings(
                new LayerTimings(
                        dispatched - start,
                        combined - dispatched,
                        end - start,
                        link.takePostingNanos(),
                        link.takeExchangePostingNanos(),
                        posted.bytes(),
                        posted.seenNanos() - start + combined - arrived,
                        end - combined),
                posted.seenNanos() - start,
                posted.postedNanos() - posted.seenNanos(),
                combined - start);
    }

    private Posted awaitProxy(final Proxy proxy, final int layer) {
        try {
            return proxy.posted().get(layerTimeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MoeRankFailedException(MoeRole.DISPATCHER, link.index, layer, "interrupted awaiting the GPU", e);
        } catch (final TimeoutException e) {
            throw new MoeRankFailedException(
                    MoeRole.DISPATCHER,
                    link.index,
                    layer,
                    "the GPU did not signal its routing within " + layerTimeout,
                    e);
        } catch (final ExecutionException e) {
            throw new MoeRankFailedException(
                    MoeRole.DISPATCHER, link.index, layer, "the host proxy failed: " + e.getCause(), e.getCause());
        }
    }

    /** The host proxy, on the engine's callback thread: the GPU stored {@code value} = layer + 1. */
    private boolean onSignal(final long previous, final long value) {
        final long seen = System.nanoTime();
        final Proxy proxy = pending;
        if (proxy == null || proxy.layer() != value) {
            return true; // a store of no layer this dispatcher waits for: nothing to post
        }
        try {
            proxy.posted().complete(post(seen, (int) (value - 1)));
        } catch (final RuntimeException e) {
            proxy.posted().completeExceptionally(e);
        }
        return true;
    }

    /**
     * Posts each expert rank's header (the counts) and routed rows, one write per rank, from the send slots in GPU
     * memory, as {@link MoeDispatcher} does.
     */
    private Posted post(final long seen, final int layer) {
        final PeerGroup group = java.util.Objects.requireNonNull(experts);
        final int self = link.index;
        final List<ScatterTarget> rows = new ArrayList<>(shape.expertRanks());
        long bytes = 0;
        for (int r = 0; r < shape.expertRanks(); r++) {
            final long length = shape.headerBytes() + mapped.host().get(INT, 4L * r) * shape.rowBytes();
            rows.add(new ScatterTarget(expertRegions.get(r), length, r * shape.slotBytes(), self * shape.slotBytes()));
            bytes += length;
        }
        final CompletableFuture<Void> rowsSent = link.postExchange(
                ScatterWrite.of(link.region, rows).withGroup(group).withImm(MoeImms.of(MoeImms.TOKENS, layer, self)));
        return new Posted(seen, System.nanoTime(), rowsSent, bytes);
    }

    /** Releases the watcher, deregisters the region and frees the GPU and mapped memory; the engine stays open. */
    @Override
    public void close() {
        watcher.close();
        try {
            link.close();
        } finally {
            freeGpu(mapped, staging);
        }
    }
}
