package dev.transferengine.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code src/main/c/tcp_pingpong.c}, the C anchor of the tcp imm round trip that {@code bundle-h200.sh} builds: it
 * compiles as the bundle compiles it, bounces its messages over one connection, or over two one-way connections with
 * {@code split}, and reports the round trips as one JSON line. Its figures are not checked: a loaded machine decides
 * them.
 */
class TcpPingpongAnchorTest {

    /** A compile and a few hundred round trips: generous, as a loaded 2-core CI machine is slow. */
    private static final long WAIT_SECONDS = 60;

    private static final int ROUND_TRIPS = 200;

    @Test
    void bouncesOverOneConnectionAndReportsOneJsonLine(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final JsonNode line = pingpong(compile(dir), dir);
        assertThat(line.get("anchor").asString()).isEqualTo("tcp_pingpong");
        assertThat(line.get("size").asInt()).isEqualTo(8);
        assertThat(line.get("round_trips").asInt()).isEqualTo(ROUND_TRIPS);
        assertThat(line.get("p50_us").asDouble()).isPositive();
        assertThat(line.has("connections"))
                .as("the anchor's line, one connection")
                .isFalse();
    }

    @Test
    void bouncesOverTwoOneWayConnectionsWhenSplit(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final JsonNode line = pingpong(compile(dir), dir, "split");
        assertThat(line.get("anchor").asString()).isEqualTo("tcp_pingpong");
        assertThat(line.get("connections").asInt()).isEqualTo(2);
        assertThat(line.get("round_trips").asInt()).isEqualTo(ROUND_TRIPS);
        assertThat(line.get("p50_us").asDouble()).isPositive();
    }

    @Test
    void refusesATrailingArgumentOtherThanSplit(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final Path binary = compile(dir);

        assertThat(run(List.of(binary.toString(), "server", "1", "8", "1", "0", "splat"), dir, 2))
                .contains("the argument after WARMUP must be 'split' (two one-way connections), not 'splat'");
        assertThat(run(List.of(binary.toString(), "client", "127.0.0.1", "1", "8", "1", "0", "twice"), dir, 2))
                .contains("not 'twice'");
    }

    /** {@value #ROUND_TRIPS} round trips of 8 bytes on a free port, then {@code mode}; returns the client's line. */
    private static JsonNode pingpong(final Path binary, final Path dir, final String... mode)
            throws IOException, InterruptedException {
        final int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort(); // closed again: the server listens there itself
        }
        final List<String> shape = List.of("8", Integer.toString(ROUND_TRIPS), "10");
        final List<String> serverCommand =
                new ArrayList<>(List.of(binary.toString(), "server", Integer.toString(port)));
        serverCommand.addAll(shape);
        serverCommand.addAll(List.of(mode));
        final Process server = new ProcessBuilder(serverCommand)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("server.txt").toFile())
                .start();
        try {
            final List<String> clientCommand =
                    new ArrayList<>(List.of(binary.toString(), "client", "127.0.0.1", Integer.toString(port)));
            clientCommand.addAll(shape);
            clientCommand.addAll(List.of(mode));
            final String output = run(clientCommand, dir, 0);
            assertThat(server.waitFor(WAIT_SECONDS, TimeUnit.SECONDS))
                    .as("the server ended after the last round trip")
                    .isTrue();
            assertThat(server.exitValue()).isZero();
            return JsonMapper.builder().build().readTree(output.lines().toList().getLast());
        } finally {
            server.destroyForcibly();
        }
    }

    /** Compiles the program as {@code bundle-h200.sh} does, warnings as errors; returns the binary. */
    private static Path compile(final Path dir) throws IOException, InterruptedException {
        final Path binary = dir.resolve("tcp_pingpong");
        run(List.of("gcc", "-O2", "-Wall", "-Werror", "-o", binary.toString(), "src/main/c/tcp_pingpong.c"), dir, 0);
        return binary;
    }

    /**
     * Runs {@code command} in the module's directory, which must exit with {@code status} within
     * {@link #WAIT_SECONDS} (else it is killed and the test fails); returns its output.
     */
    private static String run(final List<String> command, final Path dir, final int status)
            throws IOException, InterruptedException {
        final Path log = dir.resolve("output.txt");
        final Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        final boolean ended = process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS);
        if (!ended) {
            process.destroyForcibly();
        }
        final String output = Files.readString(log);
        assertThat(ended).as("%s ended; output:%n%s", command, output).isTrue();
        assertThat(process.exitValue())
                .as("%s exit status; output:%n%s", command, output)
                .isEqualTo(status);
        return output;
    }

    private static boolean onPath(final String command) {
        for (final String directory : System.getenv().getOrDefault("PATH", "").split(":", -1)) {
            if (!directory.isEmpty() && Files.isExecutable(Path.of(directory, command))) {
                return true;
            }
        }
        return false;
    }
}
