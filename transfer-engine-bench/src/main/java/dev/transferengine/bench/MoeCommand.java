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
import java.util.Arrays;
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
 * token count and exchange; a configuration that fails prints a row saying so and the run goes on. With {@code --gpu},
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
        if (layers < 1 || inputs < 1 || warmup < 0) {
            throw new IllegalArgumentException("--layers and --inputs must be >= 1 and --warmup >= 0, were " + layers
                    + ", " + inputs + ", " + warmup);
        }
        final PrintStream out = System.out;
        if (gpu) {
            return callGpu(out);
        }
        out.println("| transport | T | exchange | dispatch p50 / p99 µs | combine p50 / p99 µs | layer p50 / p99 µs"
                + " | posting per layer p50 µs | posting / (dispatch+combine) | sent per layer |");
        out.println("|---|---|---|---|---|---|---|---|---|");
        for (final String transport : transports) {
            for (final int t : tokens) {
                final MoeShape shape = new MoeShape(t, hidden, topK, experts, ranks, dispatchers);
                final MoeModel model = new MoeModel(shape, 20, width);
                for (final ExchangeMode mode : ExchangeMode.values()) {
                    out.println(row(transport, shape, model, mode));
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

    private String row(final String transport, final MoeShape shape, final MoeModel model, final ExchangeMode mode) {
        final String label =
                "| " + transport + " | " + shape.tokens() + " | " + mode.name().toLowerCase(Locale.ROOT);
        final List<TransferEngine> engines = new ArrayList<>();
        try (Arena arena = Arena.ofShared()) {
            for (int i = 0; i < shape.dispatchers() + shape.expertRanks(); i++) {
                engines.add(builder(transport).build());
            }
            return label + measure(label, shape, model, mode, engines, arena);
        } catch (final RuntimeException e) {
            return label + " | failed: " + e.getClass().getSimpleName() + ": "
                    + String.valueOf(e.getMessage()).replace('|', '/') + " | | | | | |";
        } finally {
            engines.forEach(TransferEngine::close);
        }
    }

    /** Measures one case; its stage row, starting with {@code label}, goes to {@link #stageRows}. */
    private String measure(
            final String label,
            final MoeShape shape,
            final MoeModel model,
            final ExchangeMode mode,
            final List<TransferEngine> engines,
            final Arena arena) {
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
        final long[] dispatch = new long[layers];
        final long[] combine = new long[layers];
        final long[] layer = new long[layers];
        final long[] posting = new long[layers];
        // per stage: the dispatchers' compute, dispatch, combine, barrier, then the expert ranks' tokens, compute,
        // combine and barrier, each the slowest rank's
        final long[][] stage = new long[8][layers];
        long sent = 0;
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
                    final int i = n - warmup;
                    for (int r = 0; r < timings.size(); r++) {
                        final LayerTimings timing = timings.get(r);
                        final int first = r < shape.dispatchers() ? 0 : 4;
                        stage[first][i] = Math.max(stage[first][i], timing.computeNanos());
                        stage[first + 1][i] = Math.max(stage[first + 1][i], timing.dispatchNanos());
                        stage[first + 2][i] = Math.max(stage[first + 2][i], timing.combineNanos());
                        stage[first + 3][i] = Math.max(stage[first + 3][i], timing.barrierNanos());
                        if (r < shape.dispatchers()) {
                            dispatch[i] = Math.max(dispatch[i], timing.dispatchNanos());
                            layer[i] = Math.max(layer[i], timing.layerNanos());
                        } else {
                            combine[i] = Math.max(combine[i], timing.combineNanos());
                        }
                        posting[i] += timing.postingNanos();
                        sent += timing.sentBytes();
                    }
                }
            }
        }
        final long[] transfer = new long[layers];
        for (int i = 0; i < layers; i++) {
            transfer[i] = dispatch[i] + combine[i];
        }
        final StringBuilder stageRow = new StringBuilder(label);
        // the expert ranks' stages in the order they run: tokens in, compute, combine, barrier
        for (final int index : new int[] {0, 1, 2, 3, 5, 4, 6, 7}) {
            stageRow.append(" | ").append(micros(percentile(stage[index], 50)));
        }
        stageRows.add(stageRow.append(" |").toString());
        return String.format(
                Locale.ROOT,
                " | %s / %s | %s / %s | %s / %s | %s | %.1f%% | %s |",
                micros(percentile(dispatch, 50)),
                micros(percentile(dispatch, 99)),
                micros(percentile(combine, 50)),
                micros(percentile(combine, 99)),
                micros(percentile(layer, 50)),
                micros(percentile(layer, 99)),
                micros(percentile(posting, 50)),
                100.0 * percentile(posting, 50) / percentile(transfer, 50),
                size(sent / layers));
    }

    private Integer callGpu(final PrintStream out) {
        out.println("| transport | T | exchange | dispatch p50 / p99 µs | combine p50 / p99 µs | layer p50 / p99 µs"
                + " | launch to watcher seen p50 / p99 µs | watcher to post p50 / p99 µs"
                + " | dispatch to combine p50 / p99 µs | posting / (dispatch+combine) | sent per layer |");
        out.println("|---|---|---|---|---|---|---|---|---|---|---|");
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
                            + String.valueOf(e.getMessage()).replace('|', '/') + " | | | | | | | |";
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
                long expertCombine = 0;
                long expertPosting = 0;
                for (final Future<LayerTimings> rank : running) {
                    final LayerTimings expert = join(rank);
                    expertCombine = Math.max(expertCombine, expert.combineNanos());
                    expertPosting += expert.postingNanos();
                }
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
                    combine[i] = expertCombine;
                    layer[i] = timings.layer().layerNanos();
                    signal[i] = timings.signalNanos();
                    watcherToPost[i] = timings.watcherToPostNanos();
                    dispatchToCombine[i] = timings.dispatchToCombineNanos();
                    posting[i] = timings.layer().postingNanos() + expertPosting;
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
                " | %s | %s | %s | %s | %s | %s | %s | %.1f%% | %s |",
                staged ? "gpu-routed, staged" : "gpu-routed",
                percentiles(dispatch),
                percentiles(combine),
                percentiles(layer),
                percentiles(signal),
                percentiles(watcherToPost),
                percentiles(dispatchToCombine),
                100.0 * percentile(posting, 50) / percentile(transfer, 50),
                size(sent / layers));
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
        return micros(percentile(values, 50)) + " / " + micros(percentile(values, 99));
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

    private static long percentile(final long[] values, final int percent) {
        final long[] sorted = Arrays.copyOf(values, values.length);
        Arrays.sort(sorted);
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(percent / 100.0 * sorted.length) - 1)];
    }

    private static String size(final long bytes) {
        return bytes >= 1 << 20
                ? String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1 << 20))
                : String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
    }

    private static String micros(final long nanos) {
        return String.format(Locale.ROOT, "%.0f", nanos / 1000.0);
    }
}
