package dev.transferengine.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static dev.transferengine.bench.CPrograms.compile;
import static dev.transferengine.bench.CPrograms.onPath;
import static dev.transferengine.bench.CPrograms.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code src/main/c/tcp_stream.c}, the C anchor with te-bench's footprint that {@code bundle-h200.sh} builds: it
 * compiles as the bundle compiles it, streams through the region it is given (over one connection, or several sharing
 * it) and reports what it moved as one JSON line. Its figures are not checked: a loaded machine decides them.
 */
class TcpStreamAnchorTest {

    @Test
    void streamsThroughItsRegionAndReportsOneJsonLine(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final JsonNode line = stream(compile(dir, "tcp_stream", "-pthread"), dir, 2);
        assertThat(line.get("anchor").asString()).isEqualTo("tcp_stream");
        assertThat(line.get("region_mib").asInt()).isEqualTo(2);
        assertThat(line.get("huge").asInt()).isZero();
        assertThat(line.get("page").asInt()).isZero();
        assertThat(line.get("gb_per_s").asDouble()).isPositive();
        assertThat(line.get("sender_cpu_s_per_gb").asDouble()).isNotNegative();
        assertThat(line.get("receiver_cpu_s_per_gb").asDouble()).isNotNegative();
        assertThat(line.has("streams"))
                .as("the line of one stream without STREAMS")
                .isFalse();
    }

    @Test
    void readsIntoShuffledPagesWhenGivenAPageSize(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final JsonNode line = stream(compile(dir, "tcp_stream", "-pthread"), dir, 2, "1024");
        assertThat(line.get("page").asInt()).isEqualTo(1024);
        assertThat(line.get("gb_per_s").asDouble()).isPositive();
        assertThat(line.get("receiver_cpu_s_per_gb").asDouble()).isNotNegative();
    }

    @Test
    void streamsOverOneConnectionPerStreamIntoTheirPartsOfOneRegion(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final JsonNode line = stream(compile(dir, "tcp_stream", "-pthread"), dir, 4, "0", "4");
        assertThat(line.get("streams").asInt()).isEqualTo(4);
        assertThat(line.get("region_mib").asInt()).isEqualTo(4);
        assertThat(line.get("page").asInt()).isZero();
        assertThat(line.get("gb_per_s").asDouble()).isPositive();
        assertEachStreamReceivedWhatItSent(line, 4);
    }

    @Test
    void readsEachOfSeveralStreamsIntoTheShuffledPagesOfItsPart(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final JsonNode line = stream(compile(dir, "tcp_stream", "-pthread"), dir, 4, "1024", "4");
        assertThat(line.get("streams").asInt()).isEqualTo(4);
        assertThat(line.get("page").asInt()).isEqualTo(1024);
        assertThat(line.get("gb_per_s").asDouble()).isPositive();
        assertThat(line.get("receiver_cpu_s_per_gb").asDouble()).isNotNegative();
        assertEachStreamReceivedWhatItSent(line, 4);
    }

    @Test
    void refusesNoStreamsAndMoreThan64(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final Path binary = compile(dir, "tcp_stream", "-pthread");

        assertThat(run(List.of(binary.toString(), "4", "0", "1", "1", "0", "0"), dir, 2))
                .contains("STREAMS must be a whole number from 1 to 64, not '0'");
        assertThat(run(List.of(binary.toString(), "65", "0", "1", "1", "0", "65"), dir, 2))
                .contains("STREAMS must be a whole number from 1 to 64, not '65'");
    }

    @Test
    void refusesARegionTheStreamsCannotShareInWholeMebibytes(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final Path binary = compile(dir, "tcp_stream", "-pthread");

        assertThat(run(List.of(binary.toString(), "2", "0", "1", "1", "0", "4"), dir, 2))
                .contains("REGION_MIB (2) must be a multiple of STREAMS (4)");
    }

    @Test
    void refusesAPageSizeThatDoesNotDivideTheRegion(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final Path binary = compile(dir, "tcp_stream", "-pthread");

        assertThat(run(List.of(binary.toString(), "2", "0", "1", "1", "1000"), dir, 2))
                .contains("PAGE_BYTES must divide the region");
    }

    @Test
    void refusesARegionSmallerThanOneWrite(@TempDir final Path dir) throws Exception {
        assumeTrue(onPath("gcc"), "needs gcc");
        final Path binary = compile(dir, "tcp_stream", "-pthread");

        assertThat(run(List.of(binary.toString(), "0", "0", "1", "1"), dir, 2))
                .contains("REGION_MIB must be at least 1");
    }

    /**
     * Streams 0.3 s through a region of {@code regionMib} without huge pages on a free port, then {@code pageBytes}
     * and {@code streams} if given; returns the JSON line it ends with.
     */
    private static JsonNode stream(
            final Path binary, final Path dir, final int regionMib, final String... pageBytesAndStreams)
            throws IOException, InterruptedException {
        final int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort(); // closed again: the program listens there itself
        }
        final List<String> command = new ArrayList<>(
                List.of(binary.toString(), Integer.toString(regionMib), "0", "0.3", Integer.toString(port)));
        command.addAll(List.of(pageBytesAndStreams));
        final String output = run(command, dir, 0);
        return JsonMapper.builder().build().readTree(output.lines().toList().getLast());
    }

    private static void assertEachStreamReceivedWhatItSent(final JsonNode line, final int streams) {
        final List<Long> sent = longs(line.get("sent_bytes"));
        assertThat(sent).hasSize(streams).allSatisfy(bytes -> assertThat(bytes).isPositive());
        assertThat(longs(line.get("received_bytes")))
                .as("each stream's bytes received")
                .isEqualTo(sent);
    }

    private static List<Long> longs(final JsonNode array) {
        final List<Long> values = new ArrayList<>();
        for (final JsonNode value : array) {
            values.add(value.asLong());
        }
        return values;
    }
}
