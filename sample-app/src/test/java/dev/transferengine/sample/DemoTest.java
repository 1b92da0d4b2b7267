package dev.transferengine.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The default role: a prefill engine ({@code transferEngine}) and a decode engine ({@code decodeEngine}) in one
 * process, transferring on their own; health, meters and the endpoint cover both, and the Grafana dashboard in
 * docs/grafana queries only meters this app publishes.
 */
class DemoTest {

    private static final Path GRAFANA = Path.of("..", "docs", "grafana", "transfer-engine.json");
    private static final Pattern SAMPLE = Pattern.compile("^([a-z_]+)\\{([^}]*)} (\\S+)$", Pattern.MULTILINE);
    private static final Pattern METER = Pattern.compile("transfer_engine_[a-z_]+");

    private static SampleNode demo;

    @BeforeAll
    static void startDemoAndWaitForTraffic() {
        demo = SampleNode.start(Role.DEMO, "sample.demo.interval=200ms", "sample.demo.tokens=64");
        final double first = await().atMost(Duration.ofMinutes(1))
                .until(
                        () -> sum(scrape(), "transfer_engine_imm_events_total", "engine=\"decodeEngine\""),
                        imms -> imms > 0);
        await().atMost(Duration.ofMinutes(1))
                .until(
                        () -> sum(scrape(), "transfer_engine_imm_events_total", "engine=\"decodeEngine\""),
                        imms -> imms > first);
    }

    @AfterAll
    static void stopDemo() {
        demo.close();
    }

    @Test
    void metersShowBytesLeavingPrefillAndArrivingAtDecode() {
        final String scrape = scrape();

        assertThat(sum(scrape, "transfer_engine_bytes_total", "engine=\"transferEngine\"", "direction=\"out\""))
                .isPositive();
        assertThat(sum(scrape, "transfer_engine_bytes_total", "engine=\"decodeEngine\"", "direction=\"in\""))
                .isPositive();
        assertThat(sum(scrape, "transfer_engine_imm_events_total", "engine=\"decodeEngine\""))
                .isPositive();
        assertThat(sum(
                        scrape,
                        "transfer_engine_latency_seconds_count",
                        "engine=\"transferEngine\"",
                        "kind=\"paged-write\""))
                .isPositive();
        // observations of both engines' reactive facades, through Micrometer's meter handler, told apart by engine
        assertThat(sum(
                        scrape,
                        "transfer_engine_transfer_seconds_count",
                        "engine=\"transferEngine\"",
                        "kind=\"paged-write\""))
                .isPositive();
        assertThat(sum(
                        scrape,
                        "transfer_engine_transfer_seconds_count",
                        "engine=\"decodeEngine\"",
                        "kind=\"imm-wait\"",
                        "outcome=\"success\""))
                .isPositive();
        assertThat(scrape).contains("# HELP transfer_engine_transfer_seconds Reactive transfers");
    }

    @Test
    void healthAndEndpointCoverBothEngines() {
        demo.client()
                .get()
                .uri("/actuator/health")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .jsonPath("$.status")
                .isEqualTo("UP")
                .jsonPath("$.components.transferEngine.status")
                .isEqualTo("UP")
                .jsonPath("$.components.transferEngine.components.transferEngine.status")
                .isEqualTo("UP")
                .jsonPath("$.components.transferEngine.components.decodeEngine.status")
                .isEqualTo("UP")
                .jsonPath("$.components.transferEngine.components.decodeEngine.details.transport")
                .isEqualTo("tcp")
                .jsonPath("$.components.transferEngine.components.transferEngine.details.tls")
                .isEqualTo("off")
                .jsonPath("$.components.transferEngine.components.transferEngine.details.key")
                .isEqualTo("public-loopback");
        demo.client()
                .get()
                .uri("/actuator/health/transferEngine/decodeEngine")
                .exchange()
                .expectStatus()
                .isOk();
        demo.client()
                .get()
                .uri("/actuator/transferengine")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .jsonPath("$.engines.transferEngine.transport")
                .isEqualTo("tcp")
                .jsonPath("$.engines.transferEngine.key")
                .isEqualTo("public-loopback")
                .jsonPath("$.engines.decodeEngine.transport")
                .isEqualTo("tcp");
    }

    @Test
    void grafanaDashboardQueriesOnlyMetersThisAppPublishes() throws IOException {
        final JsonNode dashboard = JsonMapper.builder().build().readTree(Files.readString(GRAFANA));
        final Set<String> queried = new TreeSet<>();
        for (final String field : new String[] {"expr", "definition"}) {
            for (final JsonNode query : dashboard.findValues(field)) {
                final Matcher meter = METER.matcher(query.asString());
                while (meter.find()) {
                    queried.add(meter.group());
                }
            }
        }
        final Set<String> published = new TreeSet<>();
        final Matcher sample = SAMPLE.matcher(scrape());
        while (sample.find()) {
            published.add(sample.group(1));
        }

        assertThat(queried)
                .contains(
                        "transfer_engine_bytes_total",
                        "transfer_engine_imm_events_total",
                        "transfer_engine_latency_seconds_bucket",
                        "transfer_engine_errors_total",
                        "transfer_engine_in_flight",
                        "transfer_engine_peers",
                        "transfer_engine_handshakes_failed_total",
                        "transfer_engine_refusals_total",
                        "transfer_engine_connections_closed_total");
        assertThat(published).containsAll(queried);
    }

    private static String scrape() {
        final String body = Objects.requireNonNull(demo.client()
                .get()
                .uri("/actuator/prometheus")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody());
        return body == null ? "" : body;
    }

    /** Sum of the samples of {@code meter} whose labels contain every one of {@code labels}. */
    private static double sum(final String scrape, final String meter, final String... labels) {
        double sum = 0;
        final Matcher sample = SAMPLE.matcher(scrape);
        while (sample.find()) {
            if (!sample.group(1).equals(meter)) {
                continue;
            }
            boolean matches = true;
            for (final String label : labels) {
                matches &= sample.group(2).contains(label);
            }
            if (matches) {
                sum += Double.parseDouble(sample.group(3));
            }
        }
        return sum;
    }
}
