package dev.transferengine.moe;

import dev.transferengine.TransferEngine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The exchange with every rank on its own engine in this JVM, on each transport, checked byte for byte. */
class MoeExchangeTest {

    /** Two dispatchers, four expert ranks of two experts each, top-3: some ranks get no row from some dispatcher. */
    private static final MoeShape SHAPE = new MoeShape(8, 64, 3, 8, 4, 2);

    private static final long SEED = 20;
    private final List<TransferEngine> engines = new ArrayList<>();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        engines.forEach(TransferEngine::close);
        arena.close();
    }

    private List<TransferEngine> open(final String transport, final int count) {
        final List<TransferEngine> opened = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            final TransferEngine engine = Engines.open(transport);
            engines.add(engine);
            opened.add(engine);
        }
        return opened;
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
        "tcp, ROUTED",
        "tcp, PADDED",
        "fabric/tcp, ROUTED",
        "fabric/tcp, PADDED",
        "fabric/shm, ROUTED",
        "fabric/shm, PADDED"
    })
    void layersMatchTheSingleProcessReferenceByteForByte(final String transport, final ExchangeMode mode) {
        final MoeModel model = new MoeModel(SHAPE, SEED, 4);
        final long bytes = SHAPE.tokens() * SHAPE.rowBytes();
        final List<MemorySegment> tokens = new ArrayList<>();
        final List<MemorySegment> outs = new ArrayList<>();
        final List<MemorySegment> expected = new ArrayList<>();
        for (int d = 0; d < SHAPE.dispatchers(); d++) {
            tokens.add(arena.allocate(bytes));
            outs.add(arena.allocate(bytes));
            expected.add(arena.allocate(bytes));
            model.fillTokens(d, 0, tokens.get(d));
        }
        try (MoeCluster cluster = new MoeCluster(
                model,
                open(transport, SHAPE.dispatchers()),
                open(transport, SHAPE.expertRanks()),
                mode,
                Duration.ofSeconds(60))) {
            for (int layer = 0; layer < 3; layer++) {
                final List<TokenRouting> routings = new ArrayList<>();
                for (int d = 0; d < SHAPE.dispatchers(); d++) {
                    routings.add(model.route(tokens.get(d)));
                    model.reference(tokens.get(d), routings.get(d), expected.get(d));
                }

                final List<LayerTimings> timings = cluster.runLayer(layer, tokens, routings, outs);

                assertThat(timings).hasSize(SHAPE.dispatchers() + SHAPE.expertRanks());
                for (int d = 0; d < SHAPE.dispatchers(); d++) {
                    assertThat(outs.get(d).mismatch(expected.get(d)))
                            .as("first differing byte of dispatcher %d in layer %d", d, layer)
                            .isEqualTo(-1);
                    // the next layer's input is this one's output
                    MemorySegment.copy(outs.get(d), 0, tokens.get(d), 0, bytes);
                }
            }
        }
        assertThat(tokens.get(0).toArray(ValueLayout.JAVA_SHORT))
                .as("outputs are not all zero")
                .containsAnyOf(nonZero(tokens.get(0)));
    }

    private static short nonZero(final MemorySegment segment) {
        for (final short value : segment.toArray(ValueLayout.JAVA_SHORT)) {
            if (value != 0) {
                return value;
            }
        }
        return 0x7FFF; // no non-zero value: fails the containsAnyOf above
    }

    @Test
    void aRoutedRankWithoutRowsWritesNothingBackAndTheLayerStillMatchesTheReference() {
        final MoeShape shape = new MoeShape(1, 64, 2, 8, 4, 1);
        final MoeModel model = new MoeModel(shape, SEED, 2);
        final MemorySegment tokens = arena.allocate(shape.rowBytes());
        final MemorySegment expected = arena.allocate(shape.rowBytes());
        model.fillTokens(0, 0, tokens);
        // both rows to rank 0's experts: ranks 1 to 3 get none
        final TokenRouting routing = new TokenRouting(1, 2, new int[] {1, 0}, new float[] {.75f, .25f});
        model.reference(tokens, routing, expected);
        for (final ExchangeMode mode : ExchangeMode.values()) {
            final MemorySegment out = arena.allocate(shape.rowBytes());
            try (MoeCluster cluster = new MoeCluster(
                    model, open("tcp", 1), open("tcp", shape.expertRanks()), mode, Duration.ofSeconds(60))) {
                for (int layer = 0; layer < 3; layer++) {
                    out.fill((byte) 0);

                    final List<LayerTimings> timings =
                            cluster.runLayer(layer, List.of(tokens), List.of(routing), List.of(out));

                    assertThat(out.mismatch(expected))
                            .as("%s: first differing byte in layer %d", mode, layer)
                            .isEqualTo(-1);
                    final List<Long> sentBack = timings.subList(1, timings.size()).stream()
                            .map(LayerTimings::sentBytes)
                            .toList();
                    assertThat(sentBack)
                            .as("%s: bytes each expert rank wrote back in layer %d", mode, layer)
                            .containsExactly(
                                    mode == ExchangeMode.ROUTED ? 2 * shape.rowBytes() : shape.slotRowBytes(),
                                    mode == ExchangeMode.ROUTED ? 0L : shape.slotRowBytes(),
                                    mode == ExchangeMode.ROUTED ? 0L : shape.slotRowBytes(),
                                    mode == ExchangeMode.ROUTED ? 0L : shape.slotRowBytes());
                }
            }
        }
    }

    @Test
    void routedSendsOnlyTheRoutedRowsWhilePaddedSendsTheWorstCase() {
        final MoeModel model = new MoeModel(SHAPE, SEED, 4);
        final MemorySegment tokens = arena.allocate(SHAPE.tokens() * SHAPE.rowBytes());
        model.fillTokens(0, 0, tokens);
        final TokenRouting routing = model.route(tokens);
        final List<Long> sent = new ArrayList<>();
        for (final ExchangeMode mode : ExchangeMode.values()) {
            try (MoeCluster cluster = new MoeCluster(
                    model,
                    open("tcp", SHAPE.dispatchers()),
                    open("tcp", SHAPE.expertRanks()),
                    mode,
                    Duration.ofSeconds(60))) {
                final List<MemorySegment> in = List.of(tokens, tokens);
                final List<MemorySegment> out =
                        List.of(arena.allocate(tokens.byteSize()), arena.allocate(tokens.byteSize()));
                sent.add(cluster.runLayer(0, in, List.of(routing, routing), out)
                        .get(0)
                        .sentBytes());
            }
        }

        final long routedRows = (long) SHAPE.tokens() * SHAPE.topK();
        assertThat(sent.get(0)).isEqualTo(routedRows * SHAPE.rowBytes() + SHAPE.expertRanks() * SHAPE.headerBytes());
        assertThat(sent.get(1)).isEqualTo(SHAPE.expertRanks() * SHAPE.slotBytes());
    }

    @ParameterizedTest(name = "rows for the doomed rank: {0}")
    @ValueSource(booleans = {true, false})
    void anExpertRankThatDiesFailsTheLayerNamingIt(final boolean rowsForTheDoomedRank) throws Exception {
        final MoeShape shape = new MoeShape(4, 32, 2, 4, 2, 1);
        final MoeModel model = new MoeModel(shape, SEED, 2);
        final List<TransferEngine> experts = open("tcp", 2);
        final Duration timeout = Duration.ofMinutes(5); // far above a prompt failure: the test must not wait it out
        final MemorySegment tokens = arena.allocate(shape.tokens() * shape.rowBytes());
        final MemorySegment out = arena.allocate(tokens.byteSize());
        model.fillTokens(0, 0, tokens);
        // without rows, rank 1 writes no combine, so only the dispatch and the barrier can find it dead
        final TokenRouting routing = rowsForTheDoomedRank
                ? model.route(tokens)
                : new TokenRouting(
                        4, 2, new int[] {0, 1, 1, 0, 0, 1, 1, 0}, new float[] {.5f, .5f, .7f, .3f, .2f, .8f, .6f, .4f});
        final ExecutorService threads = Executors.newFixedThreadPool(3);
        try (MoeDispatcher dispatcher =
                        new MoeDispatcher(open("tcp", 1).get(0), shape, 0, ExchangeMode.ROUTED, timeout);
                MoeExpertRank live = new MoeExpertRank(
                        experts.get(0), shape, 0, model.expertsOfRank(0), ExchangeMode.ROUTED, timeout);
                MoeExpertRank doomed = new MoeExpertRank(
                        experts.get(1), shape, 1, model.expertsOfRank(1), ExchangeMode.ROUTED, timeout)) {
            final MoePeers peers =
                    new MoePeers(List.of(dispatcher.descriptor()), List.of(live.descriptor(), doomed.descriptor()));
            dispatcher.connect(peers);
            live.connect(peers);
            doomed.connect(peers);
            final Future<LayerTimings> first = threads.submit(() -> live.runLayer(0));
            final Future<LayerTimings> second = threads.submit(() -> doomed.runLayer(0));
            dispatcher.runLayer(0, tokens, routing, out);
            first.get();
            second.get();

            experts.get(1).close(); // expert rank 1 dies between layers

            final Future<LayerTimings> survivor = threads.submit(() -> live.runLayer(1));
            assertThatThrownBy(() -> dispatcher.runLayer(1, tokens, routing, out))
                    .isInstanceOfSatisfying(MoeRankFailedException.class, e -> {
                        assertThat(e.role()).isEqualTo(MoeRole.EXPERT);
                        assertThat(e.rank()).isEqualTo(1);
                        assertThat(e.layer()).isEqualTo(1);
                    })
                    .hasMessageContaining("expert rank 1")
                    .hasMessageContaining("unreachable");
            assertThatThrownBy(survivor::get)
                    .cause()
                    .isInstanceOfSatisfying(MoeRankFailedException.class, e -> {
                        assertThat(e.role()).isEqualTo(MoeRole.EXPERT);
                        assertThat(e.rank()).isEqualTo(1);
                    })
                    .hasMessageContaining("expert rank 1");
        } finally {
            threads.shutdownNow();
        }
    }
}
