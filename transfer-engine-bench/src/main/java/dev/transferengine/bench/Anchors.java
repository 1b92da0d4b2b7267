package dev.transferengine.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The C programs te-bench {@code --compare} measures beside the engine, on the same loopback, right after the
 * engine's run: iperf3 (one stream per NIC) and {@code tcp_pingpong} for tcp; fabtests' {@code fi_rma_bw -o writedata}
 * ({@code -o read} beside reads; its message rate beside paged requests) and
 * {@code fi_rma_pingpong -o writedata} for fabric, from a libfabric build's prefix ({@code bin/}, {@code lib/}).
 * Each runs its server, then its client, as child processes; blocks until both ended.
 */
final class Anchors {

    /** One anchor figure: GB/s (bandwidth anchors) or the round trip in microseconds (latency anchors). */
    record Figure(String anchor, String command, double value) {}

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final int IPERF_PORT = 5299;
    private static final int PINGPONG_PORT = 18515;
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Pattern WHITESPACE = Pattern.compile("\\s+");

    private Anchors() {}

    /** iperf3 with {@code streams} parallel streams ({@code -P}, one per NIC) for {@code seconds}: the receiver's GB/s. */
    static Figure iperf3(final String iperf3, final int seconds, final int streams) throws IOException {
        final Process server = start(List.of(iperf3, "-s", "-1", "-p", Integer.toString(IPERF_PORT)), null);
        try {
            final List<String> client = new ArrayList<>(List.of(
                    iperf3,
                    "-c",
                    "127.0.0.1",
                    "-p",
                    Integer.toString(IPERF_PORT),
                    "-t",
                    Integer.toString(seconds),
                    "-J"));
            if (streams > 1) {
                client.addAll(List.of("-P", Integer.toString(streams)));
            }
            final String out = runRetrying(client, null);
            final JsonNode root = JSON.readTree(out);
            final double bits = root.path("end")
                    .path("sum_received")
                    .path("bits_per_second")
                    .asDouble();
            if (bits <= 0) {
                throw new IOException("iperf3 reported no received throughput: " + abbreviate(out));
            }
            return new Figure("iperf3", String.join(" ", client), bits / 8 / 1e9);
        } finally {
            stop(server);
        }
    }

    /** The C TCP ping-pong, 8-byte messages: the median round trip in microseconds. */
    static Figure tcpPingpong(final String binary, final int roundTrips) throws IOException {
        final String iterations = Integer.toString(roundTrips);
        final String warmup = Integer.toString(Math.max(1000, roundTrips / 10));
        final Process server =
                start(List.of(binary, "server", Integer.toString(PINGPONG_PORT), "8", iterations, warmup), null);
        try {
            final List<String> client =
                    List.of(binary, "client", "127.0.0.1", Integer.toString(PINGPONG_PORT), "8", iterations, warmup);
            final String out = runRetrying(client, null);
            final String last = out.strip().substring(out.strip().lastIndexOf('\n') + 1);
            return new Figure(
                    "tcp_pingpong",
                    String.join(" ", client),
                    JSON.readTree(last).path("p50_us").asDouble());
        } finally {
            stop(server);
        }
    }

    /**
     * {@code fi_rma_bw -e rdm -o OPERATION} ({@code writedata}, {@code write} or {@code read}) at {@code size} bytes:
     * MB/s / 1000 = GB/s; with {@code cuda}, between GPU buffers.
     */
    static Figure fiRmaBw(
            final Path prefix, final String provider, final String operation, final long size, final boolean cuda)
            throws IOException {
        final List<String> args = fiRmaBwArgs(operation, size, cuda);
        final String[] row = fabtest(prefix, "fi_rma_bw", provider, args);
        return new Figure(
                "fi_rma_bw",
                "fi_rma_bw " + String.join(" ", args) + " -p " + provider,
                Double.parseDouble(row[4]) / 1000);
    }

    /**
     * The message rate of {@code fi_rma_bw -e rdm -o OPERATION -W 64} at {@code size} bytes per message, the anchor
     * of paged requests of pages of that size: Mxfers/sec x 1e6 = messages per second.
     */
    static Figure fiRmaBwMessageRate(final Path prefix, final String provider, final String operation, final long size)
            throws IOException {
        final List<String> args = fiRmaBwArgs(operation, size, false);
        final String[] row = fabtest(prefix, "fi_rma_bw", provider, args);
        return new Figure(
                "fi_rma_bw",
                "fi_rma_bw " + String.join(" ", args) + " -p " + provider + " (messages/s)",
                Double.parseDouble(row[6]) * 1e6);
    }

    private static List<String> fiRmaBwArgs(final String operation, final long size, final boolean cuda) {
        final int iterations = Math.clamp((4L << 30) / size, 200, 20_000);
        final List<String> args = new ArrayList<>(List.of(
                "-e",
                "rdm",
                "-o",
                operation,
                "-S",
                Long.toString(size),
                "-I",
                Integer.toString(iterations),
                "-W",
                "64",
                "-w",
                Integer.toString(Math.max(10, iterations / 20))));
        if (cuda) {
            args.addAll(List.of("-D", "cuda"));
        }
        return args;
    }

    /** {@code fi_rma_pingpong -e rdm -o writedata -S 8}: twice its one-way usec/xfer, a round trip. */
    static Figure fiRmaPingpong(final Path prefix, final String provider) throws IOException {
        final List<String> args = List.of("-e", "rdm", "-o", "writedata", "-S", "8", "-I", "20000", "-w", "1000");
        final String[] row = fabtest(prefix, "fi_rma_pingpong", provider, args);
        return new Figure(
                "fi_rma_pingpong",
                "fi_rma_pingpong " + String.join(" ", args) + " -p " + provider + " (round trip = 2 x usec/xfer)",
                2 * Double.parseDouble(row[5]));
    }

    /**
     * Runs a fabtests pair: the server, then the client against it. shm exchanges addresses out of band (-E on
     * the server, -B on the client), tcp by address. Returns the client's last result row split into columns
     * (bytes, iters, total, time, MB/sec, usec/xfer, Mxfers/sec).
     */
    private static String[] fabtest(
            final Path prefix, final String test, final String provider, final List<String> args) throws IOException {
        final String binary = prefix.resolve("bin").resolve(test).toString();
        if (!Files.isExecutable(Path.of(binary))) {
            throw new IOException(binary + " is not an executable; --fabtests names a libfabric prefix with fabtests");
        }
        final String lib = prefix.resolve("lib").toString();
        final List<String> server = new ArrayList<>(List.of(binary));
        server.addAll(args);
        server.addAll(List.of("-p", provider));
        final List<String> client = new ArrayList<>(server);
        if (provider.equals("shm")) {
            server.add("-E");
            client.addAll(List.of("-E", "-B", "9229", "127.0.0.1"));
        } else {
            server.addAll(List.of("-s", "127.0.0.1"));
            client.addAll(List.of("-s", "127.0.0.1", "127.0.0.1"));
        }
        final Process serverProcess = start(server, lib);
        try {
            final String out = runRetrying(client, lib);
            String @Nullable [] row = null;
            for (final String line : out.lines().toList()) {
                final String trimmed = line.strip();
                if (!trimmed.isEmpty() && Character.isDigit(trimmed.charAt(0))) {
                    row = WHITESPACE.split(trimmed);
                }
            }
            if (row == null || row.length < 7) {
                throw new IOException(test + " printed no result row: " + abbreviate(out));
            }
            return row;
        } finally {
            stop(serverProcess);
        }
    }

    private static Process start(final List<String> command, final @Nullable String libraryPath) throws IOException {
        final ProcessBuilder builder =
                new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        if (libraryPath != null) {
            libraryPath(builder, libraryPath);
        }
        return builder.start();
    }

    /** Runs a client, retrying for a few seconds while its server is not listening yet; returns its output. */
    private static String runRetrying(final List<String> command, final @Nullable String libraryPath)
            throws IOException {
        String out = "";
        for (int attempt = 0; attempt < 20; attempt++) {
            sleep(attempt == 0 ? 300 : 250);
            final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            if (libraryPath != null) {
                libraryPath(builder, libraryPath);
            }
            final Process process = builder.start();
            final byte[] bytes;
            try {
                bytes = process.getInputStream().readAllBytes();
                if (!process.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    throw new IOException(String.join(" ", command) + " did not end within " + TIMEOUT);
                }
            } catch (final InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new IOException("interrupted waiting for " + command.getFirst(), e);
            }
            out = new String(bytes, StandardCharsets.UTF_8);
            if (process.exitValue() == 0) {
                return out;
            }
            final String lower = out.toLowerCase(Locale.ROOT);
            if (!lower.contains("refused") && !lower.contains("connect")) {
                break;
            }
        }
        throw new IOException(String.join(" ", command) + " failed: " + abbreviate(out));
    }

    /** {@code libraryPath} first, then what LD_LIBRARY_PATH had (e.g. the CUDA libraries that {@code -D cuda} needs). */
    private static void libraryPath(final ProcessBuilder builder, final String libraryPath) {
        final String inherited = builder.environment().getOrDefault("LD_LIBRARY_PATH", "");
        builder.environment().put("LD_LIBRARY_PATH", inherited.isEmpty() ? libraryPath : libraryPath + ":" + inherited);
    }

    private static void stop(final Process process) {
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (final InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static void sleep(final long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private static String abbreviate(final String text) {
        final String flat = text.strip().replace('\n', ' ');
        return flat.length() <= 400 ? flat : flat.substring(flat.length() - 400);
    }
}
