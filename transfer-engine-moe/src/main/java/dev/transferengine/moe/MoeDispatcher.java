package dev.transferengine.moe;

import dev.transferengine.PeerGroup;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.ScatterTarget;
import dev.transferengine.ScatterWrite;
import dev.transferengine.TransferEngine;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A dispatcher rank: per layer, packs its tokens by expert rank, dispatches them (per expert rank one write of the
 * slot's header, which holds the counts, and exactly the routed rows behind it; one scatter with an imm over the
 * pre-registered peer group of expert ranks), waits for the outputs of every expert rank it sent rows to (routed, a
 * rank that got none writes nothing back; padded, every rank writes its whole slot back), sums them with the gate
 * weights, and passes the layer's barrier, which every rank joins, so a dead rank fails the layer even if it had no
 * rows.
 *
 * <p>Region: per expert rank a send slot ({@link MoeShape#slotBytes()}: header, then rows), then per expert rank a
 * combine slot ({@link MoeShape#slotRowBytes()}) that the expert rank writes its outputs into, row for row in the order
 * it received them. One thread drives a dispatcher; not thread-safe.
 */
public final class MoeDispatcher implements AutoCloseable {

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    private final RankLink link;
    private final long combineOffset;
    private final int[] perExpert;
    private final int[] rowsOfRank;
    private final int[] slotRank;
    private final int[] slotRow;
    private final float[] sum;
    private @Nullable PeerGroup experts;
    private List<RegionDescriptor> expertRegions = List.of();

    /**
     * A dispatcher on an engine the caller owns; allocates and registers its region.
     *
     * @param engine the engine (stays open on {@link #close()})
     * @param shape the exchange's shape
     * @param index this dispatcher's index, 0..D-1
     * @param mode routed (the engine's way) or padded (the collective baseline)
     * @param layerTimeout how long a layer may wait for a silent peer before it fails naming it
     * @throws IllegalArgumentException if the index or timeout is out of range
     */
    public MoeDispatcher(
            final TransferEngine engine,
            final MoeShape shape,
            final int index,
            final ExchangeMode mode,
            final Duration layerTimeout) {
        this.combineOffset = shape.expertRanks() * shape.slotBytes();
        this.link = new RankLink(
                engine,
                shape,
                mode,
                MoeRole.DISPATCHER,
                index,
                combineOffset + shape.expertRanks() * shape.slotRowBytes(),
                layerTimeout);
        this.perExpert = new int[shape.experts()];
        this.rowsOfRank = new int[shape.expertRanks()];
        this.slotRank = new int[shape.tokens() * shape.topK()];
        this.slotRow = new int[shape.tokens() * shape.topK()];
        this.sum = new float[shape.hidden()];
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
     * Resolves the peers once (a peer group of the expert ranks for the scatters, one of every other rank for the
     * barrier). Blocks while the engine resolves them.
     *
     * @param peers every rank's descriptor
     * @throws IllegalArgumentException if the peers do not match the shape
     */
    public void connect(final MoePeers peers) {
        experts = link.connect(peers, peers.experts(), MoeImms.COMBINE);
        expertRegions = peers.experts();
    }

    /**
     * Runs one layer: dispatch, wait for the combine, sum, barrier. Blocks the calling thread until the layer's barrier
     * passed.
     *
     * @param layer the layer number (consecutive per run; its parity keeps neighbouring layers apart)
     * @param tokens T x H bf16 from offset 0
     * @param routing where each token goes (from the gate)
     * @param out T x H bf16, the combined outputs, written from offset 0
     * @return what this dispatcher measured
     * @throws MoeRankFailedException naming the rank if a peer died or stayed silent past the layer timeout
     * @throws IllegalArgumentException if the routing does not fit the shape
     */
    public LayerTimings runLayer(
            final int layer, final MemorySegment tokens, final TokenRouting routing, final MemorySegment out) {
        try {
            return layer(layer, tokens, routing, out);
        } catch (final MoeRankFailedException e) {
            link.abort(e);
            throw e;
        }
    }

    private LayerTimings layer(
            final int layer, final MemorySegment tokens, final TokenRouting routing, final MemorySegment out) {
        final MoeShape shape = link.shape;
        final PeerGroup group = experts;
        if (group == null) {
            throw new IllegalStateException(MoeRole.DISPATCHER.name(link.index) + " is not connected");
        }
        final long start = System.nanoTime();
        pack(tokens, routing);
        final long packed = System.nanoTime();
        final long sent = dispatch(layer, group);
        final long dispatched = System.nanoTime();
        for (int e = 0; e < shape.expertRanks(); e++) {
            if (link.mode != ExchangeMode.ROUTED || rowsOfRank[e] > 0) {
                link.awaitFrom(
                        link.counter(MoeImms.of(MoeImms.COMBINE, layer, e)), 1, MoeRole.EXPERT, e, layer, "combine");
            }
        }
        final long arrived = System.nanoTime();
        reduce(routing, out);
        final long combined = System.nanoTime();
        link.barrier(layer);
        final long end = System.nanoTime();
        return new LayerTimings(
                dispatched - start,
                combined - dispatched,
                end - start,
                link.takePostingNanos(),
                link.takeExchangePostingNanos(),
                sent,
                packed - start + combined - arrived,
                end - combined);
    }

    /** Sorts the (token, slot) pairs by expert rank and local expert into the send slots and writes their headers. */
    private void pack(final MemorySegment tokens, final TokenRouting routing) {
        final MoeShape shape = link.shape;
        if (routing.tokens() != shape.tokens() || routing.topK() != shape.topK()) {
            throw new IllegalArgumentException("routing of " + routing.tokens() + " x " + routing.topK()
                    + " does not fit the shape's " + shape.tokens() + " x " + shape.topK());
        }
        java.util.Arrays.fill(perExpert, 0);
        for (int t = 0; t < shape.tokens(); t++) {
            for (int j = 0; j < shape.topK(); j++) {
                final int expert = routing.expert(t, j);
                if (expert >= shape.experts()) {
                    throw new IllegalArgumentException(
                            "token " + t + " routes to expert " + expert + " of " + shape.experts());
                }
                perExpert[expert]++;
            }
        }
        // perExpert becomes each expert's first row in its rank's slot
        final int epr = shape.expertsPerRank();
        for (int r = 0; r < shape.expertRanks(); r++) {
            final long header = r * shape.slotBytes();
            int rows = 0;
            for (int le = 0; le < epr; le++) {
                final int count = perExpert[r * epr + le];
                link.memory.set(INT, header + 4L * (1 + le), count);
                perExpert[r * epr + le] = rows;
                rows += count;
            }
            link.memory.set(INT, header, rows);
            rowsOfRank[r] = rows;
        }
        final long rowBytes = shape.rowBytes();
        for (int t = 0; t < shape.tokens(); t++) {
            for (int j = 0; j < shape.topK(); j++) {
                final int expert = routing.expert(t, j);
                final int rank = shape.rankOf(expert);
                final int row = perExpert[expert]++;
                slotRank[t * shape.topK() + j] = rank;
                slotRow[t * shape.topK() + j] = row;
                MemorySegment.copy(
                        tokens,
                        t * rowBytes,
                        link.memory,
                        rank * shape.slotBytes() + shape.headerBytes() + row * rowBytes,
                        rowBytes);
            }
        }
    }

    /** Posts the layer's scatters and waits until every expert rank acknowledged them; returns the bytes sent. */
    private long dispatch(final int layer, final PeerGroup group) {
        final MoeShape shape = link.shape;
        final int self = link.index;
        final List<ScatterTarget> rows = new ArrayList<>(shape.expertRanks());
        final boolean routed = link.mode == ExchangeMode.ROUTED;
        long bytes = 0;
        for (int r = 0; r < shape.expertRanks(); r++) {
            // routed: the header travels in the same write as the rows, so the imm that credits the rows also says
            // how many; padded: every slot whole, whatever it holds
            final long length = routed ? shape.headerBytes() + rowsOfRank[r] * shape.rowBytes() : shape.slotBytes();
            rows.add(new ScatterTarget(expertRegions.get(r), length, r * shape.slotBytes(), self * shape.slotBytes()));
            bytes += length;
        }
        link.complete(
                link.postExchange(ScatterWrite.of(link.region, rows)
                        .withGroup(group)
                        .withImm(MoeImms.of(MoeImms.TOKENS, layer, self))),
                layer,
                MoeRole.EXPERT,
                routed ? "dispatching the tokens" : "dispatching the padded slots");
        return bytes;
    }

    /** Sums each token's expert outputs with its gate weights, in slot order (the reference's arithmetic). */
    private void reduce(final TokenRouting routing, final MemorySegment out) {
        final MoeShape shape = link.shape;
        for (int t = 0; t < shape.tokens(); t++) {
            java.util.Arrays.fill(sum, 0f);
            for (int j = 0; j < shape.topK(); j++) {
                final int slot = t * shape.topK() + j;
                Combine.accumulate(
                        sum,
                        routing.weight(t, j),
                        link.memory,
                        combineOffset + slotRank[slot] * shape.slotRowBytes() + slotRow[slot] * shape.rowBytes());
            }
            Combine.store(sum, out, t * shape.rowBytes());
        }
    }

    /** Deregisters and frees the region; the engine stays open. */
    @Override
    public void close() {
        link.close();
    }
}
