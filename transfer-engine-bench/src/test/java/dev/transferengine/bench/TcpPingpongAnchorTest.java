package dev.transferengine.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static dev.transferengine.bench.CPrograms.WAIT_SECONDS;
import static dev.transferengine.bench.CPrograms.compile;
import static dev.transferengine.bench.CPrograms.onPath;
import static dev.transferengine.bench.CPrograms.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code src/main/c/tcp_pingpong.c}, the C anchor of the tcp imm round trip that {@code bundle-h200.sh} builds: it
 * compiles as the bundle compiles it, bounces its messages over one connection, or over two one-way connections with
 * {@code split}, and reports the round trips as one JSON line. Its figures are not checked: a loaded machine decides
 * them.
 */
class TcpPingpongAnchorTest {

    private static final int ROUND_TRIPS = 200;

    @Test
    void bouncesOverOneConnectionAndReportsOneJsonLine(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final JsonNode line = pingpong(compile(dir, "tcp_pingpong"), dir);
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
        final JsonNode line = pingpong(compile(dir, "tcp_pingpong"), dir, "split");
        assertThat(line.get("anchor").asString()).isEqualTo("tcp_pingpong");
        assertThat(line.get("connections").asInt()).isEqualTo(2);
        assertThat(line.get("round_trips").asInt()).isEqualTo(ROUND_TRIPS);
        assertThat(line.get("p50_us").asDouble()).isPositive();
    }

    @Test
    void refusesATrailingArgumentOtherThanSplit(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final Path binary = compile(dir, "tcp_pingpong");

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
}
