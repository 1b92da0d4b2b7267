package dev.transferengine.bench;

import dev.transferengine.GroupSpec;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.moe.ExchangeMode;
import dev.transferengine.moe.GpuLayerTimings;
import dev.transferengine.moe.LayerTimings;
import dev.transferengine.moe.MoeCluster;
import dev.transferengine.moe.MoeExpertRank;
import dev.transferengine.moe.MoeGpuDispatcher;
import dev.transferengine.moe.MoeGpuExperts;
import dev.transferengine.moe.MoeModel;
import dev.transferengine.moe.MoePeers;
import dev.transferengine.moe.MoeShape;
import dev.transferengine.moe.TokenRouting;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code te-bench moe}: MoE dispatch and combine per layer, every rank on its own engine in this process, on each
 * transport, the engine's routed exchange beside the padded (collective) one. Prints one Markdown row per transport,
 * token count and exchange, pooled over {@code --rounds} interleaved rounds after one unmeasured warm-up of the JVM; a
 * configuration that fails prints a row saying so and the run goes on. With {@code --gpu},
 * the GPU-initiated exchange instead ({@link MoeGpuDispatcher}: routing by a kernel on GPU 0, a UVM watcher, the host
 * proxy posting from GPU memory; the expert ranks' matmul by a kernel on the same GPU, {@link MoeGpuExperts}), one row
 * per transport and token count. On fabric every engine asks for FI_HMEM; where the provider has none (libfabric's
 * tcp), every engine opens without it and the dispatcher stages through host memory (the row says {@code staged}).
 */
@Command(
        name = "moe",
        mixinStandardHelpOptions = true,
        description = "MoE dispatch/combine latency per layer, routed vs padded, one Markdown row per case.")
public final class MoeCommand implements Callable<Integer> {

    @Option(
            names = "--transports",
            split = ",",
            defaultValue = "tcp,fabric/tcp,fabric/shm",
            description = "transports: tcp, fabric/tcp, fabric/shm (default ${DEFAULT-VALUE})")
    List<String> transports = new ArrayList<>();

    @Option(
            names = "--tokens",
            split = ",",
            defaultValue = "1,128",
            description = "tokens per dispatcher per layer (default ${DEFAULT-VALUE})")
    List<Integer> tokens = new ArrayList<>();

    @Option(names = "--hidden", defaultValue = "7168", description = "hidden size, bf16 (default ${DEFAULT-VALUE})")
    int hidden;

    @Option(names = "--top-k", defaultValue = "8", description = "experts per token (default ${DEFAULT-VALUE})")
    int topK;

    @Option(names = "--experts", defaultValue = "256", description = "experts in total (default ${DEFAULT-VALUE})")
    int experts;

    @Option(
            names = "--ranks",
            defaultValue = "8",
            description = "expert ranks, each its own engine (default ${DEFAULT-VALUE})")
    int ranks;

    @Option(
            names = "--dispatchers",
            defaultValue = "1",
            description = "dispatcher ranks, each its own engine (default ${DEFAULT-VALUE})")
    int dispatchers;

    @Option(names = "--width", defaultValue = "2", description = "experts' inner width R (default ${DEFAULT-VALUE})")
    int width;

    @Option(
            names = "--layers",
            defaultValue = "60",
            description = "measured layers per case (default ${DEFAULT-VALUE})")
    int layers;

    @Option(names = "--warmup", defaultValue = "5", description = "layers before measuring (default ${DEFAULT-VALUE})")
    int warmup;

    @Option(
            names = "--inputs",
            defaultValue = "4",
            description = "distinct inputs per dispatcher, each routed and checked against the reference once,"
                    + " then cycled (default ${DEFAULT-VALUE})")
    int inputs;

    @Option(
            names = "--rounds",
            defaultValue = "3",
            description = "rounds per transport and token count, each routed and padded on fresh engines, the order"
                    + " alternating; a row pools its rounds' layers (default ${DEFAULT-VALUE})")
    int rounds;

    @Mixin
    EngineTuning tuning;

    @Option(
            names = "--gpu",
            description = "the GPU-initiated exchange on CUDA device 0 instead of the CPU's routed and padded ones")
    boolean gpu;

    @Option(
            names = "--stages",
            description = "after the table, one of each case's stages per layer (p50): the dispatcher's and the"
                    + " slowest expert rank's compute, transfers and barrier")
    boolean stages;

    /** The stage table's rows, in the main table's order. */
    private final List<String> stageRows = new ArrayList<>();

    @Override
    public Integer call() {
        if (layers < 1 || inputs < 1 || warmup < 0 || rounds < 1) {
            throw new IllegalArgumentException("--layers, --inputs and --rounds must be >= 1 and --warmup >= 0, were "
                    + layers + ", " + inputs + ", " + rounds + ", " + warmup);
        }
        final PrintStream out = System.out;
        if (gpu) {
            return callGpu(out);
        }
        out.println("| transport | T | exchange | dispatch p50 / p99 µs | combine p50 / p99 µs | layer p50 / p99 µs"
                + " | posting, all ranks summed p50 µs | summed / (dispatch+combine)"
                + " | posting on the critical path p50 µs | critical / (dispatch+combine) | sent per layer |");
        out.println("|---|---|---|---|---|---|---|---|---|---|---|");
        warmUpJvm();
        for (final String transport : transports) {
            for (final int t : tokens) {
                final MoeShape shape = new MoeShape(t, hidden, topK, experts, ranks, dispatchers);
                final MoeModel model = new MoeModel(shape, 20, width);
                for (final String row : rows(transport, shape, model)) {
                    out.println(row);
                    out.flush();
                }
            }
        }
        if (stages) {
            out.println();
            out.println(
                    "| transport | T | exchange | dispatcher: pack + sum µs | dispatch µs | outputs in and summed µs"
                            + " | barrier µs | expert ranks (slowest): tokens in µs | compute µs | combine µs | barrier µs |");
            out.println("|---|---|---|---|---|---|---|---|---|---|---|");
            stageRows.forEach(out::println);
        }
        return 0;
    }

    /**
     * Runs the first transport's smallest token count once per exchange, unmeasured, so that the JIT has compiled the
     * exchange's paths before the first measured case: measured on a cold JVM, that case (tcp at T = 1, routed) ran
     * 2-3x slower than the same case later in the run, which made routed look behind padded at T = 1. A failure here
     * shows in the measured rows.
     */
    private void warmUpJvm() {
        if (transports.isEmpty() || tokens.isEmpty()) {
            return;
        }
        final MoeShape shape = new MoeShape(Collections.min(tokens), hidden, topK, experts, ranks, dispatchers);
        final MoeModel model = new MoeModel(shape, 20, width);
        for (final ExchangeMode mode : ExchangeMode.values()) {
            try {
                run(transports.getFirst(), shape, model, mode, new MoeSamples());
            } catch (final RuntimeException e) {
                return;
            }
        }
    }

    /**
     * Measures both exchanges of one transport and token count in {@link #rounds} rounds, routed first in even rounds
     * and padded first in odd ones, so drift of the host's load reaches both alike; returns their rows, routed first.
     * An exchange that fails gets a row saying so and runs no further round.
     */
    private List<String> rows(final String transport, final MoeShape shape, final MoeModel model) {
        final ExchangeMode[] modes = ExchangeMode.values();
        final MoeSamples[] samples = new MoeSamples[modes.length];
        final String[] failures = new String[modes.length];
        for (int m = 0; m < modes.length; m++) {
            samples[m] = new MoeSamples();
        }
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < modes.length; i++) {
                final int m = round % 2 == 0 ? i : modes.length - 1 - i;
                if (failures[m] == null) {
                    try {
                        run(transport, shape, model, modes[m], samples[m]);
                    } catch (final RuntimeException e) {
                        failures[m] = " | failed: " + e.getClass().getSimpleName() + ": "
                                + String.valueOf(e.getMessage()).replace('|', '/') + " | | | | | | | |";
                    }
                }
            }
        }
        final List<String> rows = new ArrayList<>();
        for (int m = 0; m < modes.length; m++) {
            final String label = "| " + transport + " | " + shape.tokens() + " | "
                    + modes[m].name().toLowerCase(Locale.ROOT);
            rows.add(label + (failures[m] != null ? failures[m] : samples[m].cells()));
            if (failures[m] == null) {
                stageRows.add(label + samples[m].stageCells());
            }
        }
        return rows;
    }

    /** Runs one round of one case on fresh engines: {@link #warmup} layers, then {@link #layers} into {@code samples}. */
    private void run(
            final String transport,
            final MoeShape shape,
            final MoeModel model,
            final ExchangeMode mode,
            final MoeSamples samples) {
        final List<TransferEngine> engines = new ArrayList<>();
        try (Arena arena = Arena.ofShared()) {
            for (int i = 0; i < shape.dispatchers() + shape.expertRanks(); i++) {
                engines.add(builder(transport).build());
            }
            measure(shape, model, mode, engines, arena, samples);
        } finally {
            engines.forEach(TransferEngine::close);
        }
    }

    /** Measures one round of one case into {@code samples}, checking each distinct input against the reference. */
    private void measure(
            final MoeShape shape,
            final MoeModel model,
            final ExchangeMode mode,
            final List<TransferEngine> engines,
            final Arena arena,
            final MoeSamples samples) {
        final long bytes = shape.tokens() * shape.rowBytes();
        final List<List<MemorySegment>> in = new ArrayList<>();
        final List<List<TokenRouting>> routings = new ArrayList<>();
        final List<List<MemorySegment>> expected = new ArrayList<>();
        for (int i = 0; i < inputs; i++) {
            final List<MemorySegment> layerIn = new ArrayList<>();
            final List<TokenRouting> layerRouting = new ArrayList<>();
            final List<MemorySegment> layerExpected = new ArrayList<>();
            for (int d = 0; d < shape.dispatchers(); d++) {
                final MemorySegment tokens = arena.allocate(bytes);
                model.fillTokens(d, i, tokens);
                layerIn.add(tokens);
                layerRouting.add(model.route(tokens));
                layerExpected.add(arena.allocate(bytes));
            }
            in.add(layerIn);
            routings.add(layerRouting);
            expected.add(layerExpected);
        }
        final List<MemorySegment> outs = new ArrayList<>();
        for (int d = 0; d < shape.dispatchers(); d++) {
            outs.add(arena.allocate(bytes));
        }
        try (MoeCluster cluster = new MoeCluster(
                model,
                engines.subList(0, shape.dispatchers()),
                engines.subList(shape.dispatchers(), engines.size()),
                mode,
                Duration.ofSeconds(60))) {
            for (int n = 0; n < warmup + layers; n++) {
                final int input = n % inputs;
                final List<LayerTimings> timings = cluster.runLayer(n, in.get(input), routings.get(input), outs);
                if (n < inputs) {
                    check(model, shape, in.get(input), routings.get(input), expected.get(input), outs, n);
                }
                if (n >= warmup) {
                    final int i = samples.nextLayer();
                    for (int r = 0; r < timings.size(); r++) {
                        samples.add(i, timings.get(r), r < shape.dispatchers());
                    }
                }
            }
        }
    }

    private Integer callGpu(final PrintStream out) {
        out.println("| transport | T | exchange | dispatch p50 / p99 µs | combine p50 / p99 µs | layer p50 / p99 µs"
                + " | launch to watcher seen p50 / p99 µs | watcher to post p50 / p99 µs"
                + " | dispatch to combine p50 / p99 µs | summed posting / (dispatch+combine)"
                + " | critical posting / (dispatch+combine) | sent per layer |");
        out.println("|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (final String transport : transports) {
            for (final int t : tokens) {
                final MoeShape shape = new MoeShape(t, hidden, topK, experts, ranks, 1);
                final MoeModel model = new MoeModel(shape, 20, width);
                final String label = "| " + transport + " | " + t;
                final List<TransferEngine> engines = new ArrayList<>();
                String row;
                try {
                    if (transport.startsWith("fabric/")) {
                        try {
                            openGpuEngines(transport, shape, "true", engines); // GPUDirect where the provider has it
                        } catch (final TransportUnavailableException noHmem) {
                            // every engine on the same rung: the dispatcher stages through host memory
                            engines.forEach(TransferEngine::close);
                            engines.clear();
                            openGpuEngines(transport, shape, "false", engines);
                        }
                    } else {
                        openGpuEngines(transport, shape, null, engines);
                    }
                    row = label + measureGpu(shape, model, engines);
                } catch (final RuntimeException e) {
                    row = label + " | gpu-routed | failed: " + e.getClass().getSimpleName() + ": "
                            + String.valueOf(e.getMessage()).replace('|', '/') + " | | | | | | | | |";
                } finally {
                    engines.forEach(TransferEngine::close);
                }
                out.println(row);
                out.flush();
            }
        }
        return 0;
    }

    /** Opens the dispatcher's engine (its only group serves GPU 0) and the expert ranks' into {@code engines}. */
    private void openGpuEngines(
            final String transport,
            final MoeShape shape,
            final @Nullable String hmem,
            final List<TransferEngine> engines) {
        for (int i = 0; i < 1 + shape.expertRanks(); i++) {
            // the dispatcher's GPU is its engine's only group: peer groups resolve on the main one
            TransferEngineBuilder builder =
                    builder(transport, i == 0 ? GroupSpec.of(1).withCudaDevice(0) : GroupSpec.of(1));
            if (hmem != null) {
                builder = builder.option("fabric.hmem", hmem);
            }
            engines.add(builder.build());
        }
    }

    private String measureGpu(final MoeShape shape, final MoeModel model, final List<TransferEngine> engines) {
        final long bytes = shape.tokens() * shape.rowBytes();
        final long[] dispatch = new long[layers];
        final long[] combine = new long[layers];
        final long[] layer = new long[layers];
        final long[] signal = new long[layers];
        final long[] watcherToPost = new long[layers];
        final long[] dispatchToCombine = new long[layers];
        final long[] posting = new long[layers];
        final long[] critical = new long[layers];
        long sent = 0;
        boolean staged = false;
        final Duration timeout = Duration.ofSeconds(60);
        final List<MoeExpertRank> ranks = new ArrayList<>();
        final List<MoeGpuExperts> computes = new ArrayList<>();
        final ExecutorService threads = Executors.newFixedThreadPool(shape.expertRanks());
        try (Arena arena = Arena.ofShared();
                MoeGpuDispatcher dispatcher = new MoeGpuDispatcher(engines.get(0), model, 0, 0, timeout)) {
            staged = dispatcher.staged();
            for (int e = 0; e < shape.expertRanks(); e++) {
                // the experts' matmul by a kernel on the same GPU, each rank its own stream
                computes.add(new MoeGpuExperts(model, e, 0));
                ranks.add(new MoeExpertRank(
                        engines.get(1 + e), shape, e, computes.getLast(), ExchangeMode.ROUTED, timeout));
            }
            final MoePeers peers = new MoePeers(
                    List.of(dispatcher.descriptor()),
                    ranks.stream().map(MoeExpertRank::descriptor).toList());
            dispatcher.connect(peers);
            ranks.forEach(rank -> rank.connect(peers));
            final List<MemorySegment> in = new ArrayList<>();
            for (int i = 0; i < inputs; i++) {
                final MemorySegment tokensIn = arena.allocate(bytes);
                model.fillTokens(0, i, tokensIn);
                in.add(tokensIn);
            }
            final MemorySegment expected = arena.allocate(bytes);
            final MemorySegment actual = arena.allocate(bytes);
            for (int n = 0; n < warmup + layers; n++) {
                final int number = n;
                final MemorySegment input = in.get(n % inputs);
                dispatcher.load(input);
                final List<Future<LayerTimings>> running = ranks.stream()
                        .map(rank -> threads.submit(() -> rank.runLayer(number)))
                        .toList();
                final GpuLayerTimings timings = dispatcher.runLayer(n);
                final ExpertSide expertSide = ExpertSide.of(running);
                if (n < inputs) {
                    final TokenRouting routing = model.route(input);
                    if (!dispatcher.routing().equals(routing)) {
                        throw new IllegalStateException("layer " + n + ": the GPU's routing differs from the gate's");
                    }
                    model.reference(input, routing, expected);
                    dispatcher.output(actual);
                    final long mismatch = actual.mismatch(expected);
                    if (mismatch >= 0) {
                        throw new IllegalStateException(
                                "layer " + n + ": the output differs from the reference at byte " + mismatch);
                    }
                }
                if (n >= warmup) {
                    final int i = n - warmup;
                    dispatch[i] = timings.layer().dispatchNanos();
                    combine[i] = expertSide.combineNanos();
                    layer[i] = timings.layer().layerNanos();
                    signal[i] = timings.signalNanos();
                    watcherToPost[i] = timings.watcherToPostNanos();
                    dispatchToCombine[i] = timings.dispatchToCombineNanos();
                    posting[i] = timings.layer().postingNanos() + expertSide.postingNanos();
                    critical[i] = timings.layer().exchangePostingNanos() + expertSide.combinePostingNanos();
                    sent += timings.layer().sentBytes();
                }
            }
        } finally {
            threads.shutdownNow();
            ranks.forEach(MoeExpertRank::close);
            computes.forEach(MoeGpuExperts::close);
        }
        final long[] transfer = new long[layers];
        for (int i = 0; i < layers; i++) {
            transfer[i] = dispatch[i] + combine[i];
        }
        return String.format(
                Locale.ROOT,
                " | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
                staged ? "gpu-routed, staged" : "gpu-routed",
                percentiles(dispatch),
                percentiles(combine),
                percentiles(layer),
                percentiles(signal),
                percentiles(watcherToPost),
                percentiles(dispatchToCombine),
                MoeSamples.share(posting, transfer),
                MoeSamples.share(critical, transfer),
                MoeSamples.size(sent / layers));
    }

    /**
     * The expert ranks' side of one GPU layer: the slowest combine, that rank's combine posting (on the critical path),
     * and every rank's posting summed.
     */
    private record ExpertSide(long combineNanos, long combinePostingNanos, long postingNanos) {

        static ExpertSide of(final List<Future<LayerTimings>> running) {
            long combine = 0;
            long combinePosting = 0;
            long posting = 0;
            for (final Future<LayerTimings> rank : running) {
                final LayerTimings expert = join(rank);
                if (expert.combineNanos() >= combine) {
                    combine = expert.combineNanos();
                    combinePosting = expert.exchangePostingNanos();
                }
                posting += expert.postingNanos();
            }
            return new ExpertSide(combine, combinePosting, posting);
        }
    }

    private static LayerTimings join(final Future<LayerTimings> rank) {
        try {
            return rank.get();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (final ExecutionException e) {
            throw e.getCause() instanceof RuntimeException runtime ? runtime : new IllegalStateException(e.getCause());
        }
    }

    private static String percentiles(final long[] values) {
        return MoeSamples.micros(MoeSamples.percentile(values, 50)) + " / "
                + MoeSamples.micros(MoeSamples.percentile(values, 99));
    }

    /** Checks every dispatcher's output against the single-process reference, byte for byte. */
    private static void check(
            final MoeModel model,
            final MoeShape shape,
            final List<MemorySegment> in,
            final List<TokenRouting> routings,
            final List<MemorySegment> expected,
            final List<MemorySegment> outs,
            final int layer) {
        for (int d = 0; d < shape.dispatchers(); d++) {
            model.reference(in.get(d), routings.get(d), expected.get(d));
            final long mismatch = outs.get(d).mismatch(expected.get(d));
            if (mismatch >= 0) {
                throw new IllegalStateException("layer " + layer + ": dispatcher " + d
                        + "'s output differs from the reference at byte " + mismatch);
            }
        }
    }

    private TransferEngineBuilder builder(final String transport) {
        return builder(transport, GroupSpec.of(1));
    }

    private TransferEngineBuilder builder(final String transport, final GroupSpec group) {
        final TransferEngineBuilder builder =
                tuning.apply(TransferEngine.builder().group(group).bindAddress("127.0.0.1"));
        if (transport.startsWith("fabric/")) {
            return builder.transport("fabric").option("fabric.provider", transport.substring("fabric/".length()));
        }
        return builder.transport(transport);
    }
}
