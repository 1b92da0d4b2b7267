package dev.transferengine.moe;

import dev.transferengine.PeerGroup;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.ScatterTarget;
import dev.transferengine.ScatterWrite;
import dev.transferengine.TransferEngine;

import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * An expert rank: per layer, waits for each dispatcher's tokens (one ImmCounter credit per dispatcher for the write of
 * the header with the counts and the rows behind it),
 * computes its experts on the rows it got, writes the outputs back to each dispatcher's combine slot with one scatter
 * over the pre-registered peer group of dispatchers, and passes the layer's barrier. Routed, a dispatcher that sent no
 * rows gets no combine write (it knows from its own counts not to wait for one), so a rank that got no rows at all
 * posts nothing until the barrier, and posts its barrier imms only once every dispatcher's came (the dispatchers pass
 * the barrier after the combine): sent earlier, they reach every worker while the other ranks still move rows.
 *
 * <p>Region: per dispatcher a receive slot ({@link MoeShape#slotBytes()}: header, then rows), then per dispatcher an
 * output slot ({@link MoeShape#slotRowBytes()}), the combine's source. One thread drives an expert rank; not
 * thread-safe.
 */
public final class MoeExpertRank implements AutoCloseable {

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    private final RankLink link;
    private final ExpertCompute compute;
    private final int[] counts;
    private final long outputOffset;
    private final int[] rowsFrom;
    private @Nullable PeerGroup dispatchers;
    private List<RegionDescriptor> dispatcherRegions = List.of();

    /**
     * An expert rank on an engine the caller owns; allocates and registers its region.
     *
     * @param engine the engine (stays open on {@link #close()})
     * @param shape the exchange's shape
     * @param index this rank's index, 0..E-1; it owns experts {@code index * X/E ..} of the next {@code X/E}
     * @param compute computes (at least) this rank's experts: their {@link ExpertWeights} on the CPU, or a {@link
     *     MoeGpuExperts} on a GPU (the caller closes it after this rank)
     * @param mode the dispatchers' exchange mode
     * @param layerTimeout how long a layer may wait for a silent peer before it fails naming it
     * @throws IllegalArgumentException if the index or timeout is out of range, or {@code compute} lacks an expert
     */
    public MoeExpertRank(
            final TransferEngine engine,
            final MoeShape shape,
            final int index,
            final ExpertCompute compute,
            final ExchangeMode mode,
            final Duration layerTimeout) {
        for (int le = 0; le < shape.expertsPerRank(); le++) {
            if (!compute.holds(index * shape.expertsPerRank() + le)) {
                throw new IllegalArgumentException("the expert compute lacks expert "
                        + (index * shape.expertsPerRank() + le) + " of " + MoeRole.EXPERT.name(index));
            }
        }
        this.outputOffset = shape.dispatchers() * shape.slotBytes();
        this.link = new RankLink(
                engine,
                shape,
                mode,
                MoeRole.EXPERT,
                index,
                outputOffset + shape.dispatchers() * shape.slotRowBytes(),
                layerTimeout);
        this.compute = compute;
        this.counts = new int[shape.expertsPerRank()];
        this.rowsFrom = new int[shape.dispatchers()];
    }

    /**
     * This rank's region, for every other rank's {@link MoePeers}.
     *
     * @return the descriptor
     */
    public RegionDescriptor descriptor() {
        return link.region.descriptor();
    }

    /**
     * Resolves the peers once (a peer group of the dispatchers for the combine, one of every other rank for the
     * barrier). Blocks while the engine resolves them.
     *
     * @param peers every rank's descriptor
     * @throws IllegalArgumentException if the peers do not match the shape
     */
    public void connect(final MoePeers peers) {
        dispatchers = link.connect(peers, peers.dispatchers(), MoeImms.TOKENS);
        dispatcherRegions = peers.dispatchers();
    }

    /**
     * Runs one layer: receive, compute, combine, barrier. Blocks the calling thread until the layer's barrier passed.
     *
     * @param layer the layer number, the same on every rank
     * @return what this rank measured
     * @throws MoeRankFailedException naming the rank if a peer died, stayed silent past the layer timeout or sent a
     *     malformed header
     */
    public LayerTimings runLayer(final int layer) {
        try {
            return layer(layer);
        } catch (final MoeRankFailedException e) {
            link.abort(e);
            throw e;
        }
    }

    private LayerTimings layer(final int layer) {
        final MoeShape shape = link.shape;
        final PeerGroup group = dispatchers;
        if (group == null) {
            throw new IllegalStateException(MoeRole.EXPERT.name(link.index) + " is not connected");
        }
        final long start = System.nanoTime();
        for (int d = 0; d < shape.dispatchers(); d++) {
            // one write per dispatcher: its imm means the header (the counts) and the rows behind it are in
            link.awaitFrom(
                    link.counter(MoeImms.of(MoeImms.TOKENS, layer, d)), 1, MoeRole.DISPATCHER, d, layer, "tokens");
        }
        final long received = System.nanoTime();
        for (int d = 0; d < shape.dispatchers(); d++) {
            rowsFrom[d] = compute(d, layer);
        }
        final long computed = System.nanoTime();
        final boolean routed = link.mode == ExchangeMode.ROUTED;
        final List<ScatterTarget> targets = new ArrayList<>(shape.dispatchers());
        long bytes = 0;
        for (int d = 0; d < shape.dispatchers(); d++) {
            // routed: only to dispatchers that sent rows; padded: every slot whole, as a collective would
            if (!routed || rowsFrom[d] > 0) {
                final long length = routed ? rowsFrom[d] * shape.rowBytes() : shape.slotRowBytes();
                targets.add(new ScatterTarget(
                        dispatcherRegions.get(d),
                        length,
                        outputOffset + d * shape.slotRowBytes(),
                        shape.expertRanks() * shape.slotBytes() + link.index * shape.slotRowBytes()));
                bytes += length;
            }
        }
        final long combineStart = System.nanoTime();
        if (!targets.isEmpty()) {
            // the pre-resolved group where every dispatcher gets a write; a subset resolves its peers per call
            final ScatterWrite combine =
                    ScatterWrite.of(link.region, targets).withImm(MoeImms.of(MoeImms.COMBINE, layer, link.index));
            link.complete(
                    link.postExchange(targets.size() == shape.dispatchers() ? combine.withGroup(group) : combine),
                    layer,
                    MoeRole.DISPATCHER,
                    "combining");
        }
        final long combined = System.nanoTime();
        // routed, a rank that got no rows joins the barrier after the dispatchers: its imms would otherwise reach every
        // worker while they still move the layer's rows
        link.barrier(layer, routed && targets.isEmpty());
        final long end = System.nanoTime();
        return new LayerTimings(
                received - start,
                combined - combineStart,
                end - start,
                link.takePostingNanos(),
                link.takeExchangePostingNanos(),
                bytes,
                computed - received,
                end - combined);
    }

    /** Computes the rows dispatcher {@code d} sent into its output slot; returns how many there were. */
    private int compute(final int d, final int layer) {
        final MoeShape shape = link.shape;
        final long slot = d * shape.slotBytes();
        final int rows = link.memory.get(INT, slot);
        int total = 0;
        for (int le = 0; le < shape.expertsPerRank(); le++) {
            final int count = link.memory.get(INT, slot + 4L * (1 + le));
            if (count < 0 || count > shape.tokens()) {
                throw new MoeRankFailedException(
                        MoeRole.DISPATCHER, d, layer, "sent " + count + " rows for one expert", null);
            }
            counts[le] = count;
            total += count;
        }
        if (rows != total || rows > shape.maxRowsPerRank()) {
            throw new MoeRankFailedException(
                    MoeRole.DISPATCHER, d, layer, "sent a header of " + rows + " rows but counts of " + total, null);
        }
        compute.compute(
                link.index * shape.expertsPerRank(),
                counts,
                link.memory,
                slot + shape.headerBytes(),
                link.memory,
                outputOffset + d * shape.slotRowBytes());
        return rows;
    }

    /** Deregisters and frees the region; the engine stays open. */
    @Override
    public void close() {
        link.close();
    }
}
