package dev.transferengine.bench;

import dev.transferengine.Device;
import dev.transferengine.ImmCounter;
import dev.transferengine.MemoryRegion;
import dev.transferengine.MrDesc;
import dev.transferengine.NetAddr;
import dev.transferengine.TransferEngine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import org.agrona.concurrent.IdleStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code te-bench write}: the active side. Starts a {@code te-bench serve} child (or uses {@code --peer}), runs one
 * workload for the duration after a warm-up, and prints one {@link BenchResult} JSON object as its last line.
 */
@Command(name = "write", mixinStandardHelpOptions = true,
    description = "Write to a te-bench serve peer (spawned unless --peer is given) and print one JSON line.")
public final class WriteCommand implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(WriteCommand.class);

    @Spec
    CommandSpec spec;

    @Mixin
    EngineOptions engineOptions;

    @Option(names = "--op", defaultValue = "write", description = "write (default), paged or imm (round-trip latency)")
    String op;

    @Option(names = "--size", defaultValue = "1MiB", converter = SizeConverter.class, description = "bytes per write (default ${DEFAULT-VALUE})")
    long size;

    @Option(names = "--page-size", defaultValue = "1KiB", converter = SizeConverter.class, description = "bytes per page for --op paged (default ${DEFAULT-VALUE})")
    long pageSize;

    @Option(names = "--pages", defaultValue = "256", description = "pages per request for --op paged (default ${DEFAULT-VALUE})")
    int pages;

    @Option(names = "--window", defaultValue = "16", description = "writes kept in flight (default ${DEFAULT-VALUE})")
    int window;

    @Option(names = "--routing", defaultValue = "sharded", description = "sharded (each write over all NICs) or pinned (each write on one NIC, rotating)")
    String routing;

    @Option(names = "--duration", defaultValue = "5s", converter = DurationConverter.class, description = "measured time (default ${DEFAULT-VALUE})")
    Duration duration;

    @Option(names = "--warmup", defaultValue = "1s", converter = DurationConverter.class, description = "unmeasured time first (default ${DEFAULT-VALUE})")
    Duration warmup;

    @Option(names = "--region", defaultValue = "64MiB", converter = SizeConverter.class,
        description = "registered region on each side; requests cycle through it (default ${DEFAULT-VALUE})")
    long region;

    @Option(names = "--peer", description = "address of a running te-bench serve (or its whole 'te-peer ...' line) instead of spawning one")
    String peer;

    /** The descriptor exchange: both connects with their handshakes, a send and its answer. */
    private long connectNanos;

    @Override
    public Integer call() throws Exception {
        validate();
        try (Arena arena = Arena.ofShared();
             PeerProcess child = peer == null ? PeerProcess.start(serveArgs()) : null;
             TransferEngine engine = engineOptions.open()) {
            final NetAddr server = child != null ? child.line().address() : peerAddress(peer);
            final MemoryRegion local = engine.register(filled(arena.allocate(region, 4096)), Device.host());
            // created before the hello, so that no pong can arrive unexpected
            final ImmCounter pongs = engine.immCounter(Imms.PONG);
            final long connectStart = System.nanoTime();
            final MrDesc remote = ClientHandshake.exchange(engine, server, local);
            connectNanos = System.nanoTime() - connectStart;
            final IdleStrategy idle = IdleStrategies.of(engineOptions.idleStrategy());
            final LatencyRecorder recorder = new LatencyRecorder(MeasuredInterval.after(warmup, duration));
            switch (op) {
                case "imm" -> new ImmRoundTrip(engine, remote, pongs, idle).run(recorder);
                case "paged" -> new WindowedWrites(engine, Requests.paged(local, remote, pageSize, pages), window, idle).run(recorder);
                default -> new WindowedWrites(engine, Requests.single(local, remote, size, engineOptions.nics,
                    routing.equals("pinned")), window, idle).run(recorder);
            }
            if (recorder.firstFailure() != null) {
                LOG.warn("{} requests failed; the first: {}", recorder.failures(), recorder.firstFailure().toString());
            }
            System.out.println(Json.line(result(engine, recorder)));
            return recorder.failures() == 0 ? 0 : 1;
        }
    }

    private void validate() {
        if (!List.of("write", "paged", "imm").contains(op)) {
            throw new ParameterException(spec.commandLine(), "--op must be write, paged or imm, not '" + op + "'");
        }
        if (!List.of("sharded", "pinned").contains(routing)) {
            throw new ParameterException(spec.commandLine(), "--routing must be sharded or pinned, not '" + routing + "'");
        }
        if (window < 1 || window > 4096) {
            throw new ParameterException(spec.commandLine(), "--window must be 1..4096, not " + window);
        }
        if (size < 1 || pageSize < 1 || pages < 1) {
            throw new ParameterException(spec.commandLine(), "--size, --page-size and --pages must be positive");
        }
        if (duration.isZero() || duration.isNegative() || warmup.isNegative()) {
            throw new ParameterException(spec.commandLine(), "--duration must be positive and --warmup not negative");
        }
    }

    private List<String> serveArgs() {
        final List<String> args = new ArrayList<>(engineOptions.peerArgs());
        args.add("--region");
        args.add(Long.toString(region));
        return args;
    }

    private static NetAddr peerAddress(final String text) {
        return PeerLine.matches(text) ? PeerLine.parse(text).address() : NetAddr.parse(text);
    }

    /** Non-zero source bytes, so that no layer can shortcut zero pages. */
    private static MemorySegment filled(final MemorySegment segment) {
        segment.fill((byte) 0x5A);
        return segment;
    }

    private BenchResult result(final TransferEngine engine, final LatencyRecorder recorder) {
        final double seconds = recorder.interval().seconds();
        final long requests = recorder.count();
        final boolean paged = op.equals("paged");
        final boolean imm = op.equals("imm");
        final long opsPerRequest = paged ? pages : 1;
        final long bytesPerRequest = imm ? 0 : paged ? pageSize * pages : size;
        return new BenchResult(op, engine.transport(), engineOptions.provider, engineOptions.nics,
            paged || imm ? null : routing.toLowerCase(Locale.ROOT), imm ? 0 : paged ? pageSize : size,
            paged ? pages : null, imm ? 1 : window, seconds, requests * opsPerRequest,
            round(requests * opsPerRequest / seconds, 1), round(requests / seconds, 1),
            round(requests * bytesPerRequest / seconds / 1e9, 3),
            round(recorder.micros(50), 2), round(recorder.micros(99), 2), round(recorder.micros(99.9), 2),
            round(recorder.maxMicros(), 2), recorder.failures(), engineOptions.tls(), round(connectNanos / 1e6, 3));
    }

    private static double round(final double value, final int digits) {
        final double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
    }
}
