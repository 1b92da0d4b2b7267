package dev.transferengine.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs {@code te-bench write} end to end in short modes, against a spawned {@code serve} JVM, and checks the JSON line. */
class TeBenchTest {

    private static final List<String> SHORT = List.of("--duration", "300ms", "--warmup", "100ms", "--region", "4MiB");

    @Test
    void writeReportsThroughputAndLatency() {
        final JsonNode line = run("write", "--nics", "2", "--size", "64KiB", "--window", "8");

        assertThat(line.get("op").asString()).isEqualTo("write");
        assertThat(line.get("transport").asString()).isEqualTo("tcp");
        assertThat(line.get("nics").asInt()).isEqualTo(2);
        assertThat(line.get("size").asLong()).isEqualTo(65536);
        assertThat(line.get("routing").asString()).isEqualTo("sharded");
        assertSane(line);
        assertThat(line.get("gb_per_s").asDouble()).isPositive();
    }

    @Test
    void pinnedRoutingRuns() {
        final JsonNode line = run("write", "--nics", "2", "--size", "4KiB", "--routing", "pinned");

        assertThat(line.get("routing").asString()).isEqualTo("pinned");
        assertSane(line);
    }

    @Test
    void pagedWritesCountPages() {
        final JsonNode line = run("write", "--op", "paged", "--page-size", "1KiB", "--pages", "16");

        assertThat(line.get("op").asString()).isEqualTo("paged");
        assertThat(line.get("pages").asInt()).isEqualTo(16);
        assertSane(line);
        assertThat(line.get("ops").asLong() % 16).isZero();
        assertThat(line.get("ops_per_s").asDouble())
                .isGreaterThan(line.get("requests_per_s").asDouble());
    }

    @Test
    void immRoundTripReportsLatency() {
        final JsonNode line = run("write", "--op", "imm");

        assertThat(line.get("op").asString()).isEqualTo("imm");
        assertThat(line.get("gb_per_s").asDouble()).isZero();
        assertSane(line);
    }

    @ParameterizedTest
    @ValueSource(strings = {"worker", "thread"})
    void eitherEchoAnswersTheImmRoundTrip(final String echo) throws IOException {
        try (PeerProcess server = PeerProcess.start(List.of("--echo", echo, "--region", "4MiB"))) {
            final JsonNode line =
                    run("write", "--op", "imm", "--peer", server.line().format());

            assertThat(line.get("op").asString()).isEqualTo("imm");
            assertSane(line);
        }
    }

    @Test
    void serveRefusesAnEchoItDoesNotKnow() {
        final ByteArrayOutputStream errors = new ByteArrayOutputStream();
        final CommandLine serve = TeBench.commandLine();
        serve.setErr(new PrintWriter(errors, true, StandardCharsets.UTF_8));

        assertThat(serve.execute("serve", "--echo", "callback")).isEqualTo(2);
        assertThat(errors.toString(StandardCharsets.UTF_8)).contains("--echo must be worker or thread, not 'callback'");
    }

    @Test
    void stagesDecomposeTheRoundTrip() {
        final JsonNode line = run("write", "--op", "imm", "--stages");

        final JsonNode stages = line.get("stages_us");
        assertThat(stages).isNotNull();
        for (final String stage : List.of("queue", "post", "wire", "notify")) {
            assertThat(stages.get(stage + "_p50").asDouble()).as(stage).isNotNegative();
            assertThat(stages.get(stage + "_p99").asDouble())
                    .as(stage)
                    .isGreaterThanOrEqualTo(stages.get(stage + "_p50").asDouble());
        }
        // the wire stage (both hops and the server) lies inside the round trip
        assertThat(stages.get("wire_p50").asDouble())
                .isPositive()
                .isLessThanOrEqualTo(line.get("max_us").asDouble());
        assertSane(line);
    }

    @Test
    void stagesOfWindowedWritesHaveNoNotifyStage() {
        final JsonNode line = run("write", "--size", "16KiB", "--stages");

        assertThat(line.get("stages_us").has("wire_p50")).isTrue();
        assertThat(line.get("stages_us").has("notify_p50")).isFalse();
        assertSane(line);
    }

    @Test
    void anAnchorThatFailsLeavesItsErrorBesideTheEngineFigures() {
        final JsonNode line =
                run("write", "--op", "paged", "--pages", "4", "--compare", "--iperf3", "/nonexistent/iperf3");

        assertThat(line.get("anchor").asString()).isEqualTo("failed");
        assertThat(line.get("anchor_error").asString()).contains("/nonexistent/iperf3");
        assertThat(line.has("ratio")).isFalse();
        assertSane(line);
    }

    private static void assertSane(final JsonNode line) {
        assertThat(line.get("errors").asLong()).isZero();
        assertThat(line.get("ops").asLong()).isPositive();
        assertThat(line.get("ops_per_s").asDouble()).isPositive();
        assertThat(line.get("duration_s").asDouble()).isPositive();
        assertThat(line.get("p50_us").asDouble()).isPositive();
        assertThat(line.get("p99_us").asDouble())
                .isGreaterThanOrEqualTo(line.get("p50_us").asDouble());
        assertThat(line.get("max_us").asDouble())
                .isGreaterThanOrEqualTo(line.get("p99_us").asDouble());
    }

    /** Runs te-bench in this JVM with stdout captured, and parses the last line of it. */
    private static JsonNode run(final String... args) {
        final String[] all = java.util.stream.Stream.concat(List.of(args).stream(), SHORT.stream())
                .toArray(String[]::new);
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final PrintStream original = System.out;
        final int exit;
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            exit = TeBench.commandLine().execute(all);
        } finally {
            System.setOut(original);
        }
        final String out = captured.toString(StandardCharsets.UTF_8).strip();
        assertThat(exit).as("exit status; stdout:%n%s", out).isZero();
        final String last = out.substring(out.lastIndexOf('\n') + 1);
        return JsonMapper.builder().build().readTree(last);
    }
}
