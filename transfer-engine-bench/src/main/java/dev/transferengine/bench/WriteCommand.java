package dev.transferengine.bench;

import dev.transferengine.Device;
import dev.transferengine.ImmCounter;
import dev.transferengine.MemoryRegion;
import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;

import org.agrona.concurrent.IdleStrategy;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code te-bench write}: the active side. Starts a {@code te-bench serve} child (or uses {@code --peer}), runs one
 * workload for the duration after a warm-up, and prints one {@link BenchResult} JSON object as its last line.
 */
@Command(
        name = "write",
        mixinStandardHelpOptions = true,
        description = "Write to a te-bench serve peer (spawned unless --peer is given) and print one JSON line.")
public final class WriteCommand implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(WriteCommand.class);

    @Spec
    CommandSpec spec;

    @Mixin
    EngineOptions engineOptions;

    @Option(
            names = "--op",
            defaultValue = "write",
            description = "write (default), paged, read (single reads, pull), paged-read or imm (round-trip latency)")
    String op;

    @Option(
            names = "--size",
            defaultValue = "1MiB",
            converter = SizeConverter.class,
            description = "bytes per write (default ${DEFAULT-VALUE})")
    long size;

    @Option(
            names = "--page-size",
            defaultValue = "1KiB",
            converter = SizeConverter.class,
            description = "bytes per page for --op paged (default ${DEFAULT-VALUE})")
    long pageSize;

    @Option(
            names = "--pages",
            defaultValue = "256",
            description = "pages per request for --op paged (default ${DEFAULT-VALUE})")
    int pages;

    @Option(names = "--window", defaultValue = "16", description = "writes kept in flight (default ${DEFAULT-VALUE})")
    int window;

    @Option(
            names = "--routing",
            defaultValue = "sharded",
            description = "sharded (each write over all NICs) or pinned (each write on one NIC, rotating)")
    String routing;

    @Option(
            names = "--duration",
            defaultValue = "5s",
            converter = DurationConverter.class,
            description = "measured time (default ${DEFAULT-VALUE})")
    Duration duration;

    @Option(
            names = "--warmup",
            defaultValue = "1s",
            converter = DurationConverter.class,
            description = "unmeasured time first (default ${DEFAULT-VALUE})")
    Duration warmup;

    @Option(
            names = "--region",
            defaultValue = "64MiB",
            converter = SizeConverter.class,
            description = "registered region on each side; requests cycle through it (default ${DEFAULT-VALUE})")
    long region;

    @Option(
            names = "--huge-pages",
            description = "back the host regions of both sides with transparent huge pages where the kernel gives"
                    + " them (madvise MADV_HUGEPAGE, 2 MiB aligned) and report the bytes they back: huge_pages_bytes")
    boolean hugePages;

    @Option(names = "--stages", description = "also report where the time goes: p50/p99 per stage (stages_us)")
    boolean stages;

    @Option(
            names = "--compare",
            description = "then run the matching C anchor on the same loopback and add its figure and the ratio: "
                    + "iperf3 / tcp_pingpong (tcp), fi_rma_bw / fi_rma_pingpong (fabric; needs --fabtests)")
    boolean compare;

    @Option(
            names = "--fabtests",
            defaultValue = "${env:FABTESTS}",
            description = "libfabric prefix holding bin/fi_rma_bw, bin/fi_rma_pingpong and lib/ (default: $FABTESTS)")
    String fabtests;

    @Option(
            names = "--iperf3",
            defaultValue = "${env:IPERF3:-iperf3}",
            description = "iperf3 binary (default: $IPERF3 or iperf3)")
    String iperf3;

    @Option(
            names = "--pingpong",
            defaultValue = "${env:TCP_PINGPONG:-tcp_pingpong}",
            description =
                    "the C tcp_pingpong binary (src/main/c/tcp_pingpong.c; default: $TCP_PINGPONG or tcp_pingpong)")
    String pingpong;

    @Option(
            names = "--peer",
            description =
                    "address of a running te-bench serve (or its whole 'te-peer ...' line) instead of spawning one")
    String peer;

    /** The descriptor exchange: both connects with their handshakes, a send and its answer. */
    private long connectNanos;

    @Override
    public Integer call() throws Exception {
        validate();
        try (Arena arena = Arena.ofShared();
                PeerProcess child = peer == null ? PeerProcess.start(serveArgs()) : null;
                // non-zero source bytes, so that no layer can shortcut zero pages
                RegionMemory memory =
                        RegionMemory.allocate(arena, engineOptions.device(), region, (byte) 0x5A, hugePages);
                TransferEngine engine = engineOptions.open()) {
            final NetworkAddress server = child != null ? child.line().address() : peerAddress(peer);
            final Map<String, Object> extra = new LinkedHashMap<>();
            if (hugePages) {
                extra.put("huge_pages_bytes", hugePageBytes(memory, child));
            }
            final MemoryRegion local = engine.register(memory.segment(), memory.device());
            // created before the hello, so that no pong can arrive unexpected
            final ImmCounter pongs = engine.immCounter(Imms.PONG);
            final long connectStart = System.nanoTime();
            final RegionDescriptor remote = ClientHandshake.exchange(engine, server, local);
            connectNanos = System.nanoTime() - connectStart;
            final IdleStrategy idle = IdleStrategies.of(engineOptions.idleStrategy());
            final MeasuredInterval interval = MeasuredInterval.after(warmup, duration);
            final LatencyRecorder recorder = new LatencyRecorder(interval);
            final StageRecorder stageRecorder = stages ? new StageRecorder(interval, op.equals("imm")) : null;
            engine.metrics().setStageProbe(stageRecorder);
            switch (op) {
                case "imm" -> new ImmRoundTrip(engine, remote, pongs, idle, stageRecorder).run(recorder);
                case "paged" ->
                    new WindowedWrites(engine, Requests.paged(local, remote, pageSize, pages), window, idle)
                            .run(recorder);
                case "paged-read" ->
                    new WindowedWrites(engine, Requests.pagedRead(local, remote, pageSize, pages), window, idle)
                            .run(recorder);
                case "read" ->
                    new WindowedWrites(
                                    engine,
                                    Requests.singleRead(
                                            local, remote, size, engineOptions.nics, routing.equals("pinned")),
                                    window,
                                    idle)
                            .run(recorder);
                default ->
                    new WindowedWrites(
                                    engine,
                                    Requests.single(local, remote, size, engineOptions.nics, routing.equals("pinned")),
                                    window,
                                    idle)
                            .run(recorder);
            }
            if (recorder.firstFailure() != null) {
                LOG.warn(
                        "{} requests failed; the first: {}",
                        recorder.failures(),
                        recorder.firstFailure().toString());
            }
            engine.metrics().setStageProbe(null);
            final BenchResult result = result(engine, recorder, stageRecorder);
            if (compare) {
                extra.putAll(compared(result));
            }
            System.out.println(Json.line(result, extra));
            return recorder.failures() == 0 ? 0 : 1;
        }
    }

    private void validate() {
        if (!List.of("write", "paged", "read", "paged-read", "imm").contains(op)) {
            throw new ParameterException(
                    spec.commandLine(), "--op must be write, paged, read, paged-read or imm, not '" + op + "'");
        }
        if (!List.of("sharded", "pinned").contains(routing)) {
            throw new ParameterException(
                    spec.commandLine(), "--routing must be sharded or pinned, not '" + routing + "'");
        }
        if (window < 1 || window > 4096) {
            throw new ParameterException(spec.commandLine(), "--window must be 1..4096, not " + window);
        }
        if (size < 1 || pageSize < 1 || pages < 1) {
            throw new ParameterException(spec.commandLine(), "--size, --page-size and --pages must be positive");
        }
        if (hugePages && engineOptions.device() instanceof Device.Cuda) {
            throw new ParameterException(
                    spec.commandLine(), "--huge-pages is for host regions, not --device " + engineOptions.device);
        }
        if (duration.isZero() || duration.isNegative() || warmup.isNegative()) {
            throw new ParameterException(spec.commandLine(), "--duration must be positive and --warmup not negative");
        }
    }

    private List<String> serveArgs() {
        final List<String> args = new ArrayList<>(engineOptions.peerArgs());
        args.add("--region");
        args.add(Long.toString(region));
        if (hugePages) {
            args.add("--huge-pages");
        }
        return args;
    }

    /**
     * The bytes huge pages back after the fill: of the source region, and of the target where te-bench started the
     * serve child (an external {@code --peer} prints its own figure).
     */
    private static Map<String, Long> hugePageBytes(final RegionMemory source, final @Nullable PeerProcess child) {
        final Map<String, Long> bytes = new LinkedHashMap<>();
        bytes.put("source", source.hugePageBytes());
        if (child != null) {
            bytes.put(
                    "target",
                    Objects.requireNonNull(
                            child.hugePageBytes(), "the serve child started with --huge-pages printed no figure"));
        }
        return bytes;
    }

    private static NetworkAddress peerAddress(final String text) {
        return PeerLine.matches(text) ? PeerLine.parse(text).address() : NetworkAddress.parse(text);
    }

    /**
     * Runs the anchor of this case and returns the fields to add: anchor, its command, its figure, the ratio and the
     * goal (issues 11 and 22): bandwidth engine/anchor >= 0.9; round trip engine p50 / anchor <= 1.5; paged on
     * fabric, pages/s over fi_rma_bw's message rate at the page size >= 0.9; paged on tcp, bytes/s over iperf3's
     * (the byte ceiling) >= 0.8. An anchor that fails leaves {@code anchor_error} instead of its figure.
     */
    private Map<String, Object> compared(final BenchResult result) {
        final Map<String, Object> extra = new LinkedHashMap<>();
        final boolean fabric = engineOptions.transport.equals("fabric");
        if (fabric && (fabtests == null || fabtests.isBlank())) {
            throw new ParameterException(
                    spec.commandLine(), "--compare on fabric needs --fabtests PREFIX (or $FABTESTS)");
        }
        final boolean paged = op.equals("paged") || op.equals("paged-read");
        final boolean reads = op.equals("read") || op.equals("paged-read");
        final String provider = engineOptions.provider == null ? "tcp" : engineOptions.provider;
        final Anchors.Figure figure;
        try {
            if (op.equals("imm")) {
                figure = fabric
                        ? Anchors.fiRmaPingpong(Path.of(fabtests), provider)
                        : Anchors.tcpPingpong(pingpong, 100_000);
            } else if (fabric && paged) {
                figure =
                        Anchors.fiRmaBwMessageRate(Path.of(fabtests), provider, reads ? "read" : "writedata", pageSize);
            } else if (fabric) {
                figure = Anchors.fiRmaBw(
                        Path.of(fabtests),
                        provider,
                        reads ? "read" : "writedata",
                        size,
                        engineOptions.device() instanceof Device.Cuda);
            } else {
                figure = Anchors.iperf3(iperf3, (int) Math.max(1, duration.toSeconds()), engineOptions.nics);
            }
        } catch (final IOException e) {
            LOG.warn("the anchor failed", e);
            extra.put("anchor", "failed");
            extra.put("anchor_error", String.valueOf(e.getMessage()));
            return extra;
        }
        extra.put("anchor", figure.anchor());
        extra.put("anchor_command", figure.command());
        if (op.equals("imm")) {
            extra.put("anchor_round_trip_us", round(figure.value(), 2));
            goal(extra, result.p50Us() / figure.value(), "ratio <= 1.5", result.p50Us() / figure.value() <= 1.5);
        } else if (fabric && paged) {
            extra.put("anchor_messages_per_s", round(figure.value(), 1));
            final double ratio = result.opsPerS() / figure.value();
            goal(extra, ratio, "ratio >= 0.9", ratio >= 0.9);
        } else {
            extra.put("anchor_gb_per_s", round(figure.value(), 3));
            final double ratio = result.gbPerS() / figure.value();
            final double least = paged ? 0.8 : 0.9;
            goal(extra, ratio, "ratio >= " + least, ratio >= least);
        }
        return extra;
    }

    private static void goal(
            final Map<String, Object> extra, final double ratio, final String goal, final boolean met) {
        extra.put("ratio", round(ratio, 3));
        extra.put("goal", goal);
        extra.put("goal_met", met);
    }

    private BenchResult result(
            final TransferEngine engine, final LatencyRecorder recorder, final @Nullable StageRecorder stageRecorder) {
        final double seconds = recorder.interval().seconds();
        final long requests = recorder.count();
        final boolean paged = op.equals("paged") || op.equals("paged-read");
        final boolean imm = op.equals("imm");
        final long opsPerRequest = paged ? pages : 1;
        final long bytesPerRequest = imm ? 0 : paged ? pageSize * pages : size;
        return new BenchResult(
                op,
                engine.transport(),
                engineOptions.provider,
                engineOptions.nics,
                paged || imm ? null : routing.toLowerCase(Locale.ROOT),
                imm ? 0 : paged ? pageSize : size,
                paged ? pages : null,
                imm ? 1 : window,
                seconds,
                requests * opsPerRequest,
                round(requests * opsPerRequest / seconds, 1),
                round(requests / seconds, 1),
                round(requests * bytesPerRequest / seconds / 1e9, 3),
                round(recorder.micros(50), 2),
                round(recorder.micros(99), 2),
                round(recorder.micros(99.9), 2),
                round(recorder.maxMicros(), 2),
                recorder.failures(),
                engineOptions.tls(),
                round(connectNanos / 1e6, 3),
                stageRecorder == null ? null : stageRecorder.micros());
    }

    private static double round(final double value, final int digits) {
        final double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
    }
}
