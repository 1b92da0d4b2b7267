package dev.transferengine.moe;

import dev.transferengine.GroupSpec;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.spi.DeviceMemory;

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

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The GPU-initiated dispatch on GPU 0: the routing computed by a kernel, the scatter posted by the host proxy from GPU
 * memory when the watcher fires, the experts' matmul and the combine's sum computed by kernels; the routing and every
 * output byte checked against the single-process reference. On fabric/tcp, whose provider has no FI_HMEM, the
 * dispatcher stages through host memory. Skips, saying why, without a GPU (or, for fabric/shm, without a libfabric
 * built with CUDA).
 */
class MoeGpuDispatcherTest {

    /** One dispatcher, four expert ranks of four experts each, top-4. */
    private static final MoeShape SHAPE = new MoeShape(16, 256, 4, 16, 4, 1);

    private static final long SEED = 2022;
    private static final int WIDTH = 3;
    private static final int LAYERS = 3;

    private final List<TransferEngine> engines = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void close() {
        threads.shutdownNow();
        engines.forEach(TransferEngine::close);
    }

    /**
     * An engine on the transport, its group serving GPU 0 if {@code gpu}; on fabric with {@code fabric.hmem} as
     * {@code hmem} says: true requires FI_HMEM, the GPU path of docs/gpu.md's first rung; false never asks for it.
     */
    private TransferEngine engine(final String transport, final String hmem, final boolean gpu) {
        // the GPU's group is the engine's only one: peer groups resolve on the main group
        TransferEngineBuilder builder =
                Engines.builder(transport, gpu ? GroupSpec.of(1).withCudaDevice(0) : GroupSpec.of(1));
        if (transport.startsWith("fabric/")) {
            builder = builder.option("fabric.hmem", hmem);
        }
        try {
            final TransferEngine engine = builder.build();
            engines.add(engine);
            return engine;
        } catch (final TransportUnavailableException e) {
            assumeTrue(false, transport + " with fabric.hmem=" + hmem + " cannot run here: " + e.getMessage());
            throw e;
        }
    }

    @ParameterizedTest(name = "{0}, fabric.hmem={1}, staged: {2}")
    @CsvSource({"tcp, auto, false", "fabric/shm, true, false", "fabric/tcp, false, true"})
    void routesOnTheGpuPostsFromGpuMemoryAndMatchesTheReferenceByteForByte(
            final String transport, final String hmem, final boolean staged) throws Exception {
        requireGpu();
        final MoeModel model = new MoeModel(SHAPE, SEED, WIDTH);
        final TransferEngine dispatcherEngine = engine(transport, hmem, true);
        final List<MoeExpertRank> experts = new ArrayList<>();
        final List<MoeGpuExperts> computes = new ArrayList<>();
        final long bytes = SHAPE.tokens() * SHAPE.rowBytes();
        try (MoeGpuDispatcher dispatcher = new MoeGpuDispatcher(dispatcherEngine, model, 0, 0, Duration.ofSeconds(60));
                Arena arena = Arena.ofConfined()) {
            // the engine moves GPU memory itself (FI_HMEM, tcp's staging) or refuses it and the dispatcher stages
            assertThat(dispatcher.staged()).as("staged by the dispatcher").isEqualTo(staged);
            for (int e = 0; e < SHAPE.expertRanks(); e++) {
                computes.add(new MoeGpuExperts(model, e, 0));
                experts.add(new MoeExpertRank(
                        engine(transport, hmem, false),
                        SHAPE,
                        e,
                        computes.getLast(),
                        ExchangeMode.ROUTED,
                        Duration.ofSeconds(60)));
            }
            final MoePeers peers = new MoePeers(
                    List.of(dispatcher.descriptor()),
                    experts.stream().map(MoeExpertRank::descriptor).toList());
            dispatcher.connect(peers);
            experts.forEach(expert -> expert.connect(peers));

            MemorySegment tokens = arena.allocate(bytes);
            MemorySegment expected = arena.allocate(bytes);
            final MemorySegment actual = arena.allocate(bytes);
            model.fillTokens(0, 0, tokens);
            dispatcher.load(tokens);
            for (int layer = 0; layer < LAYERS; layer++) {
                final int n = layer;
                final List<Future<LayerTimings>> running = experts.stream()
                        .map(expert -> threads.submit(() -> expert.runLayer(n)))
                        .toList();
                dispatcher.runLayer(layer);
                for (final Future<LayerTimings> expert : running) {
                    expert.get();
                }
                final TokenRouting routing = model.route(tokens);
                assertThat(dispatcher.routing())
                        .as("the GPU's routing in layer %d", layer)
                        .isEqualTo(routing);
                model.reference(tokens, routing, expected);
                dispatcher.output(actual);
                assertThat(actual.mismatch(expected))
                        .as("first differing byte in layer %d", layer)
                        .isEqualTo(-1);
                final MemorySegment next = tokens;
                tokens = expected;
                expected = next;
            }
            assertThat(tokens.toArray(ValueLayout.JAVA_SHORT))
                    .as("outputs are not all zero")
                    .isNotEqualTo(new short[(int) (bytes / 2)]);
        } finally {
            experts.forEach(MoeExpertRank::close);
            computes.forEach(MoeGpuExperts::close);
        }
    }

    @Test
    void computesTheExpertsOnTheGpuToTheCpusBytes() {
        requireGpu();
        // H not a multiple of the kernel's 256 lanes, R of 5: every lane and the tree's order matter
        final MoeShape shape = new MoeShape(24, 1000, 3, 8, 2, 1);
        final MoeModel model = new MoeModel(shape, SEED, 5);
        final ExpertWeights cpu = model.expertsOfRank(1);
        final int[] counts = {5, 0, 9, 10};
        final long bytes = 24 * shape.rowBytes();
        try (MoeGpuExperts gpu = new MoeGpuExperts(model, 1, 0);
                Arena arena = Arena.ofConfined()) {
            final MemorySegment in = arena.allocate(64 + bytes);
            model.fillTokens(0, 0, in.asSlice(64));
            final MemorySegment expected = arena.allocate(bytes);
            final MemorySegment actual = arena.allocate(32 + bytes);
            cpu.compute(4, counts, in, 64, expected, 0);
            gpu.compute(4, counts, in, 64, actual, 32);
            assertThat(actual.asSlice(32).mismatch(expected))
                    .as("first differing byte")
                    .isEqualTo(-1);
            assertThatThrownBy(() -> gpu.compute(0, counts, in, 64, actual, 32))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("expert 0 is not among experts 4..7");
        }
    }

    private static void requireGpu() {
        try {
            DeviceMemory.require(DeviceMemory.DEFAULT, 0);
        } catch (final DeviceUnavailableException e) {
            assumeTrue(false, "needs an NVIDIA GPU (CUDA device 0): " + e.getMessage());
        }
    }
}
