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
 * {@code src/main/c/tcp_stream.c}, the C anchor with te-bench's footprint that {@code bundle-h200.sh} builds: it
 * compiles as the bundle compiles it, streams through the region it is given and reports what it moved as one JSON
 * line. Its figures are not checked: a loaded machine decides them.
 */
class TcpStreamAnchorTest {

    /** A compile and a 0.3 s stream after the program's 1 s warm-up: generous, as a loaded 2-core CI machine is slow. */
    private static final long WAIT_SECONDS = 60;

    @Test
    void streamsThroughItsRegionAndReportsOneJsonLine(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final JsonNode line = stream(compile(dir), dir);
        assertThat(line.get("anchor").asString()).isEqualTo("tcp_stream");
        assertThat(line.get("region_mib").asInt()).isEqualTo(2);
        assertThat(line.get("huge").asInt()).isZero();
        assertThat(line.get("page").asInt()).isZero();
        assertThat(line.get("gb_per_s").asDouble()).isPositive();
        assertThat(line.get("sender_cpu_s_per_gb").asDouble()).isNotNegative();
        assertThat(line.get("receiver_cpu_s_per_gb").asDouble()).isNotNegative();
    }

    @Test
    void readsIntoShuffledPagesWhenGivenAPageSize(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final JsonNode line = stream(compile(dir), dir, "1024");
        assertThat(line.get("page").asInt()).isEqualTo(1024);
        assertThat(line.get("gb_per_s").asDouble()).isPositive();
        assertThat(line.get("receiver_cpu_s_per_gb").asDouble()).isNotNegative();
    }

    @Test
    void refusesAPageSizeThatDoesNotDivideTheRegion(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final Path binary = compile(dir);

        assertThat(run(List.of(binary.toString(), "2", "0", "1", "1", "1000"), dir, 2))
                .contains("PAGE_BYTES must divide the region");
    }

    @Test
    void refusesARegionSmallerThanOneWrite(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final Path binary = compile(dir);

        assertThat(run(List.of(binary.toString(), "0", "0", "1", "1"), dir, 2))
                .contains("REGION_MIB must be at least 1");
    }

    /**
     * Streams 0.3 s through a 2 MiB region without huge pages on a free port, then {@code pageBytes} if given; returns
     * the JSON line it ends with.
     */
    private static JsonNode stream(final Path binary, final Path dir, final String... pageBytes)
            throws IOException, InterruptedException {
        final int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort(); // closed again: the program listens there itself
        }
        final List<String> command =
                new ArrayList<>(List.of(binary.toString(), "2", "0", "0.3", Integer.toString(port)));
        command.addAll(List.of(pageBytes));
        final String output = run(command, dir, 0);
        return JsonMapper.builder().build().readTree(output.lines().toList().getLast());
    }

    /** Compiles the program as {@code bundle-h200.sh} does, warnings as errors; returns the binary. */
    private static Path compile(final Path dir) throws IOException, InterruptedException {
        final Path binary = dir.resolve("tcp_stream");
        final String source = "src/main/c/tcp_stream.c";
        run(List.of("gcc", "-O2", "-Wall", "-Werror", "-pthread", "-o", binary.toString(), source), dir, 0);
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
