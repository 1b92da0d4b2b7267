package dev.transferengine.moe;

import dev.transferengine.BarrierWrite;
import dev.transferengine.Device;
import dev.transferengine.ImmCounter;
import dev.transferengine.ImmWrite;
import dev.transferengine.MemoryRegion;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerGroup;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferListener;
import dev.transferengine.WriteRequest;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.ImmAbandonedException;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.TransferEngineException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/**
 * What both roles share: the engine, the rank's registered region, its peers, the per-layer barrier, and waiting for
 * a peer's imm in slices, probing the peer between slices so that a dead one fails the wait promptly and by name.
 */
final class RankLink implements AutoCloseable {

    /** How long one wait slice lasts before the silent peer is probed. */
    private static final Duration SLICE = Duration.ofMillis(20);
    /** How long a rank that got an abandoned imm waits for the abort that names the rank behind it. */
    private static final Duration ABORT_GRACE = Duration.ofSeconds(1);

    /** Where an abort's outcome goes: nowhere, the abort is a best effort on a failed exchange. */
    private static final TransferListener IGNORED = new TransferListener() {
        @Override
        public void onDone() {}

        @Override
        public void onError(final TransferEngineException error) {}
    };

    final TransferEngine engine;
    final MoeShape shape;
    final ExchangeMode mode;
    final MoeRole role;
    final int index;
    final MemorySegment memory;
    final MemoryRegion region;
    private final Duration layerTimeout;
    private Duration abortGrace = ABORT_GRACE;
    private final @Nullable Arena arena;
    private final Map<NetworkAddress, Integer> globalRankOf = new HashMap<>();
    private @Nullable MoePeers peers;
    private @Nullable PeerGroup barrierGroup;
    private List<RegionDescriptor> barrierTargets = List.of();
    private final Map<Integer, ImmCounter> counters = new HashMap<>();
    private long postingNanos;
    private long exchangePostingNanos;

    /**
     * The memory of a rank's region.
     *
     * @param segment the memory (GPU memory is never dereferenced here)
     * @param device where it lives
     * @param arena closed with the link, or null if the caller frees the memory
     */
    record RankMemory(
            MemorySegment segment, Device device, @Nullable Arena arena) {

        /** {@code bytes} of host memory from an arena of its own. */
        @SuppressWarnings("MustBeClosedChecker") // the link closes the arena in close()
        static RankMemory host(final long bytes) {
            final Arena arena = Arena.ofShared();
            try {
                return new RankMemory(arena.allocate(bytes, 4096), Device.host(), arena);
            } catch (final RuntimeException e) {
                arena.close();
                throw e;
            }
        }
    }

    /** A rank whose region is {@code regionBytes} of host memory, which the link allocates and frees. */
    RankLink(
            final TransferEngine engine,
            final MoeShape shape,
            final ExchangeMode mode,
            final MoeRole role,
            final int index,
            final long regionBytes,
            final Duration layerTimeout) {
        this(engine, shape, mode, role, index, RankMemory.host(regionBytes), layerTimeout);
    }

    /** A rank whose region is the given memory, e.g. GPU memory the caller owns. */
    RankLink(
            final TransferEngine engine,
            final MoeShape shape,
            final ExchangeMode mode,
            final MoeRole role,
            final int index,
            final RankMemory rankMemory,
            final Duration layerTimeout) {
        final Arena owned = rankMemory.arena();
        try {
            final int count = role == MoeRole.DISPATCHER ? shape.dispatchers() : shape.expertRanks();
            if (index < 0 || index >= count) {
                throw new IllegalArgumentException(role.name(index) + " is out of range: the shape has " + count);
            }
            if (layerTimeout.isNegative() || layerTimeout.isZero()) {
                throw new IllegalArgumentException("layer timeout must be positive, was " + layerTimeout);
            }
            this.engine = engine;
            this.shape = shape;
            this.mode = mode;
            this.role = role;
            this.index = index;
            this.layerTimeout = layerTimeout;
            this.arena = owned;
            this.memory = rankMemory.segment();
            this.region = engine.register(memory, rankMemory.device());
        } catch (final RuntimeException e) {
            if (owned != null) {
                owned.close();
            }
            throw e;
        }
    }

    /**
     * How long this rank waits after an abandoned imm for the abort that names the rank behind it ({@link #ABORT_GRACE}
     * unless set). Tests set a long one, so that the order of the two, not a clock, decides the outcome. Call before
     * the rank's first layer.
     */
    void abortGrace(final Duration grace) {
        abortGrace = grace;
    }

    /** This rank's index among all ranks: dispatchers first, then expert ranks. */
    int globalRank() {
        return globalRank(role, index);
    }

    int globalRank(final MoeRole peerRole, final int peerIndex) {
        return peerRole == MoeRole.DISPATCHER ? peerIndex : shape.dispatchers() + peerIndex;
    }

    MoePeers peers() {
        final MoePeers known = peers;
        if (known == null) {
            throw new IllegalStateException(role.name(index) + " is not connected: call connect(peers) first");
        }
        return known;
    }

    /**
     * Resolves the peers once: the barrier group (every other rank) and the role's scatter group of {@code targets}
     * (the other role's ranks, in index order), and makes the counters of the {@code kind} imms each target sends.
     * Blocks while the engine resolves them.
     *
     * @return the scatter group
     */
    PeerGroup connect(final MoePeers all, final List<RegionDescriptor> targets, final int kind) {
        connect(all);
        final List<List<NetworkAddress>> addresses = new ArrayList<>();
        for (final RegionDescriptor desc : targets) {
            addresses.add(addresses(desc));
        }
        final PeerGroup group = engine.addPeerGroup(addresses);
        for (int layer = 0; layer < 2; layer++) {
            for (int t = 0; t < targets.size(); t++) {
                counter(MoeImms.of(kind, layer, t));
            }
        }
        return group;
    }

    private void connect(final MoePeers all) {
        all.check(shape);
        final List<List<NetworkAddress>> others = new ArrayList<>();
        final List<RegionDescriptor> targets = new ArrayList<>();
        for (int g = 0; g < shape.dispatchers() + shape.expertRanks(); g++) {
            final RegionDescriptor desc = descriptorOf(all, g);
            for (final RegionDescriptor.Nic nic : desc.nics()) {
                globalRankOf.put(nic.address(), g);
            }
            if (g != globalRank()) {
                others.add(addresses(desc));
                targets.add(desc);
            }
        }
        barrierTargets = List.copyOf(targets);
        barrierGroup = targets.isEmpty() ? null : engine.addPeerGroup(others);
        peers = all;
        for (int g = 0; g < shape.dispatchers() + shape.expertRanks(); g++) {
            counter(MoeImms.abort(g));
        }
        counter(MoeImms.abort(MoeImms.UNKNOWN_RANK));
        for (int layer = 0; layer < 2; layer++) {
            for (int g = 0; g < shape.dispatchers() + shape.expertRanks(); g++) {
                // counters made up front: imms that arrive before a wait are credited to them, never lost
                counter(MoeImms.of(MoeImms.BARRIER, layer, g));
            }
        }
    }

    /** The polled counter of an imm, made once (the engine keeps credits that arrived before). */
    ImmCounter counter(final int imm) {
        return counters.computeIfAbsent(imm, engine::immCounter);
    }

    private RegionDescriptor descriptorOf(final MoePeers all, final int global) {
        return global < shape.dispatchers()
                ? all.dispatchers().get(global)
                : all.experts().get(global - shape.dispatchers());
    }

    static List<NetworkAddress> addresses(final RegionDescriptor desc) {
        return desc.nics().stream().map(RegionDescriptor.Nic::address).toList();
    }

    /** Posts a request, counting the time spent in the submit call as posting cost. */
    CompletableFuture<Void> post(final WriteRequest request) {
        final long start = System.nanoTime();
        final CompletableFuture<Void> done = engine.submit(request);
        postingNanos += System.nanoTime() - start;
        return done;
    }

    /**
     * Posts the layer's dispatch or combine scatter, counting its submit as posting cost and as the exchange's posting
     * (the part of it inside the dispatch or combine time).
     */
    CompletableFuture<Void> postExchange(final WriteRequest request) {
        final long start = System.nanoTime();
        final CompletableFuture<Void> done = engine.submit(request);
        final long spent = System.nanoTime() - start;
        postingNanos += spent;
        exchangePostingNanos += spent;
        return done;
    }

    /** The posting cost since the last call: every submit of {@link #post} and {@link #postExchange}. */
    long takePostingNanos() {
        final long taken = postingNanos;
        postingNanos = 0;
        return taken;
    }

    /** The exchange's posting since the last call: the submits of {@link #postExchange}. */
    long takeExchangePostingNanos() {
        final long taken = exchangePostingNanos;
        exchangePostingNanos = 0;
        return taken;
    }

    /**
     * Waits for a posted request; a failure names the peer rank when the engine names its NIC, else {@code
     * fallbackRole}/{@code fallbackIndex} (the single peer, or -1 for "one of").
     */
    void complete(final CompletableFuture<Void> done, final int layer, final MoeRole peerRole, final String what) {
        try {
            done.get(layerTimeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MoeRankFailedException(role, index, layer, "interrupted while " + what, e);
        } catch (final TimeoutException e) {
            throw new MoeRankFailedException(peerRole, -1, layer, what + " outlasted " + layerTimeout, e);
        } catch (final ExecutionException e) {
            throw failure(e.getCause(), layer, peerRole, what);
        }
    }

    /** Names the rank behind a failed request where the engine named its NIC. */
    MoeRankFailedException failure(
            final @Nullable Throwable cause, final int layer, final MoeRole peerRole, final String what) {
        if (cause instanceof PeerUnreachableException unreachable) {
            final Integer global = globalRankOf.get(unreachable.peer());
            if (global != null) {
                final boolean dispatcher = global < shape.dispatchers();
                return new MoeRankFailedException(
                        dispatcher ? MoeRole.DISPATCHER : MoeRole.EXPERT,
                        dispatcher ? global : global - shape.dispatchers(),
                        layer,
                        what + ": " + unreachable.getMessage(),
                        unreachable);
            }
        }
        return new MoeRankFailedException(peerRole, -1, layer, what + ": " + cause, cause);
    }

    /**
     * Takes {@code n} credits of {@code counter}, sent by the given peer; between slices, probes the peer with an
     * imm-only write, so a dead peer fails the wait as soon as the engine reports it unreachable. Blocks.
     */
    void awaitFrom(
            final ImmCounter counter,
            final long n,
            final MoeRole peerRole,
            final int peerIndex,
            final int layer,
            final String what) {
        final long deadline = System.nanoTime() + layerTimeout.toNanos();
        @Nullable CompletableFuture<Void> probe = null;
        while (true) {
            final long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                throw new MoeRankFailedException(
                        peerRole, peerIndex, layer, "no " + what + " within " + layerTimeout, null);
            }
            try {
                if (counter.tryAwait(n, Duration.ofNanos(Math.min(remaining, SLICE.toNanos())))) {
                    return;
                }
            } catch (final ImmAbandonedException abandoned) {
                throw abandonedBy(abandoned, peerRole, peerIndex, layer, what);
            }
            checkAborts(layer);
            if (probe != null && probe.isDone()) {
                if (probe.isCompletedExceptionally()) {
                    final Throwable cause = probe.exceptionNow();
                    throw new MoeRankFailedException(
                            peerRole,
                            peerIndex,
                            layer,
                            "waiting for " + what + ", the peer is unreachable: " + cause.getMessage(),
                            cause);
                }
                probe = null;
            }
            if (probe == null) {
                final RegionDescriptor peer = descriptorOf(peers(), globalRank(peerRole, peerIndex));
                probe = engine.submit(ImmWrite.of(peer, MoeImms.probe(globalRank())));
            }
        }
    }

    /**
     * A sender gave its imm up: usually a live rank whose scatter failed at a rank that died, and which then aborts
     * the layer naming that rank. Its abort may come just behind its abandonment, so it is awaited for a moment
     * ({@link #abortGrace(Duration)}) before the sender itself is named.
     */
    private MoeRankFailedException abandonedBy(
            final ImmAbandonedException abandoned,
            final MoeRole peerRole,
            final int peerIndex,
            final int layer,
            final String what) {
        final long until = System.nanoTime() + abortGrace.toNanos();
        while (System.nanoTime() - until < 0) {
            checkAborts(layer);
            LockSupport.parkNanos(SLICE.toNanos());
        }
        checkAborts(layer);
        return new MoeRankFailedException(
                peerRole, peerIndex, layer, "its " + what + " was abandoned: " + abandoned.getMessage(), abandoned);
    }

    /**
     * Tells every other rank, without waiting, that a layer failed and which rank failed it, so that a rank waiting for
     * a live peer that gave the layer up fails at once, naming the failed rank, instead of waiting out its timeout. The
     * exchange stays failed: a later layer fails the same way (build a new exchange after a rank failure).
     */
    void abort(final MoeRankFailedException failure) {
        final PeerGroup group = barrierGroup;
        if (group == null) {
            return;
        }
        final int failed = failure.rank() < 0 ? MoeImms.UNKNOWN_RANK : globalRank(failure.role(), failure.rank());
        try {
            engine.submit(BarrierWrite.of(barrierTargets, MoeImms.abort(failed)).withGroup(group), IGNORED);
        } catch (final RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /** Fails the wait if a peer reported a rank failed. */
    private void checkAborts(final int layer) {
        for (int g = 0; g < shape.dispatchers() + shape.expertRanks(); g++) {
            if (counter(MoeImms.abort(g)).balance() > 0) {
                final boolean dispatcher = g < shape.dispatchers();
                throw new MoeRankFailedException(
                        dispatcher ? MoeRole.DISPATCHER : MoeRole.EXPERT,
                        dispatcher ? g : g - shape.dispatchers(),
                        layer,
                        "reported failed by a peer rank",
                        null);
            }
        }
        if (counter(MoeImms.abort(MoeImms.UNKNOWN_RANK)).balance() > 0) {
            throw new MoeRankFailedException(
                    role, -1, layer, "a peer rank reported the layer failed by a rank it could not name", null);
        }
    }

    /** The layer's barrier: an imm to every other rank, then one from each. Blocks. */
    void barrier(final int layer) {
        barrier(layer, false);
    }

    /**
     * The layer's barrier; {@code afterDispatchers}: post only once every dispatcher's barrier imm came, so that a rank
     * with nothing to do sends nothing while the others still exchange the layer's rows. Blocks.
     */
    void barrier(final int layer, final boolean afterDispatchers) {
        final PeerGroup group = barrierGroup;
        if (group == null) {
            return;
        }
        if (afterDispatchers) {
            for (int d = 0; d < shape.dispatchers(); d++) {
                awaitPeerBarrier(MoeRole.DISPATCHER, d, layer);
            }
        }
        final CompletableFuture<Void> sent =
                post(BarrierWrite.of(barrierTargets, MoeImms.of(MoeImms.BARRIER, layer, globalRank()))
                        .withGroup(group));
        for (int d = 0; d < shape.dispatchers() && !afterDispatchers; d++) {
            awaitPeerBarrier(MoeRole.DISPATCHER, d, layer);
        }
        for (int e = 0; e < shape.expertRanks(); e++) {
            awaitPeerBarrier(MoeRole.EXPERT, e, layer);
        }
        complete(sent, layer, MoeRole.EXPERT, "the barrier");
    }

    private void awaitPeerBarrier(final MoeRole peerRole, final int peerIndex, final int layer) {
        final int global = globalRank(peerRole, peerIndex);
        if (global != globalRank()) {
            awaitFrom(counter(MoeImms.of(MoeImms.BARRIER, layer, global)), 1, peerRole, peerIndex, layer, "barrier");
        }
    }

    /** Deregisters the region and frees it; the engine stays open (it belongs to the caller). */
    @Override
    public void close() {
        try {
            engine.deregister(region);
        } catch (final EngineClosedException closed) {
            // a closed engine dropped its registrations with it: nothing left to deregister
        } finally {
            if (arena != null) {
                arena.close();
            }
        }
    }
}
