package dev.transferengine.sample.dashboard;

import dev.transferengine.sample.Role;
import dev.transferengine.sample.SampleNode;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.junit.jupiter.api.Test;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The dashboard's event stream and page, read over HTTP without a browser. */
class DashboardControllerTest {

    private static final ParameterizedTypeReference<ServerSentEvent<DashboardSnapshot>> EVENT =
            new ParameterizedTypeReference<>() {};
    private static final ParameterizedTypeReference<List<DashboardSnapshot>> HISTORY =
            new ParameterizedTypeReference<>() {};

    @Test
    void streamsBothEnginesOfTheDemoWithTheirCountersMoving() {
        try (SampleNode demo = SampleNode.start(
                Role.DEMO, "sample.demo.interval=100ms", "sample.demo.tokens=64", "sample.dashboard.interval=100ms")) {
            final DashboardSnapshot first = await().atMost(Duration.ofMinutes(1))
                    .until(
                            () -> snapshot(demo),
                            snapshot -> engine(snapshot, "decodeEngine")
                                            .nics()
                                            .getFirst()
                                            .bytesIn()
                                    > 0);
            final DashboardSnapshot later = await().atMost(Duration.ofMinutes(1))
                    .until(
                            () -> snapshot(demo),
                            snapshot -> snapshot.timeMillis() > first.timeMillis()
                                    && nic(snapshot, "decodeEngine").bytesIn()
                                            > nic(first, "decodeEngine").bytesIn()
                                    && nic(snapshot, "transferEngine").bytesOut()
                                            > nic(first, "transferEngine").bytesOut());

            assertThat(later.kvMode()).isEqualTo("push");
            assertThat(later.engines())
                    .extracting(DashboardSnapshot.Engine::name)
                    .containsExactly("transferEngine", "decodeEngine");
            assertThat(nic(later, "decodeEngine").imms()).isPositive();
            // addresses as people read them, not the hex of the wire form
            assertThat(engine(later, "decodeEngine").address()).startsWith("tcp://127.0.0.1:");
            assertThat(nic(later, "transferEngine").address()).startsWith("tcp://127.0.0.1:");
            // prefill's peer is decode's engine, and it is connected
            assertThat(engine(later, "transferEngine").peers()).anySatisfy(peer -> {
                assertThat(peer.address())
                        .isEqualTo(engine(later, "decodeEngine").address());
                assertThat(peer.state()).isEqualTo("CONNECTED");
            });
            assertThat(later.latencies())
                    .extracting(DashboardSnapshot.Latency::meter)
                    .contains("sample.kv.layer.write", "sample.kv.transfer.exposed");
            // rows for people: what it measures and whose it is, not Micrometer ids
            assertThat(later.latencies())
                    .extracting(DashboardSnapshot.Latency::name)
                    .contains("KV: one layer's paged write, submit to completion")
                    .anySatisfy(name -> assertThat(name).startsWith("transferEngine: paged-write latency (to tcp://"))
                    .allSatisfy(name -> assertThat(name).doesNotContain("{", "outcome=success"));
        }
    }

    @Test
    void keepsAHistoryFromStartUpWithRatesAveragedOverTheWindow() {
        try (SampleNode demo = SampleNode.start(
                Role.DEMO,
                "sample.demo.interval=100ms",
                "sample.demo.tokens=64",
                "sample.dashboard.interval=100ms",
                "sample.dashboard.rate-window=1s",
                "sample.dashboard.history=3s")) {
            // nobody watched so far: the server sampled all the same
            final List<DashboardSnapshot> history = await().atMost(Duration.ofMinutes(1))
                    .until(
                            () -> history(demo),
                            snapshots -> snapshots.size() >= 5
                                    && nic(snapshots.getLast(), "decodeEngine")
                                                    .rates()
                                                    .bytesIn()
                                            > 0);

            assertThat(history)
                    .extracting(DashboardSnapshot::timeMillis)
                    .isSorted()
                    .doesNotHaveDuplicates();
            assertThat(history.getLast().timeMillis() - history.getFirst().timeMillis())
                    .isLessThanOrEqualTo(3000);
            final DashboardSnapshot.Rates rates =
                    nic(history.getLast(), "decodeEngine").rates();
            assertThat(rates.windowMillis()).isPositive().isLessThanOrEqualTo(1000);
            assertThat(rates.imms()).isPositive();
            // the event stream starts with the newest snapshot of that history or a later one
            assertThat(snapshot(demo).timeMillis())
                    .isGreaterThanOrEqualTo(history.getLast().timeMillis());
        }
    }

    @Test
    void refusesARateWindowShorterThanTheSamplingInterval() {
        assertThatThrownBy(() ->
                        SampleNode.start(Role.DEMO, "sample.dashboard.interval=2s", "sample.dashboard.rate-window=1s"))
                .rootCause()
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sample.dashboard needs 0 < interval <= rate-window <= history")
                .hasMessageContaining("PT2S, PT1S, PT1M");
    }

    @Test
    void servesThePageAtTheRoot() {
        try (SampleNode demo = SampleNode.start(Role.DEMO, "sample.demo.tokens=64")) {
            demo.client()
                    .get()
                    .uri("/")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectHeader()
                    .contentTypeCompatibleWith(MediaType.TEXT_HTML)
                    .expectBody(String.class)
                    .value(page -> assertThat(page).contains("dashboard.js"));
            demo.client()
                    .get()
                    .uri("/dashboard.js")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(String.class)
                    .value(script -> assertThat(script).contains("EventSource('dashboard/events')"));
        }
    }

    /** The server's history, oldest first. */
    static List<DashboardSnapshot> history(final SampleNode node) {
        return Objects.requireNonNull(WebClient.create(node.url())
                .get()
                .uri("/dashboard/history")
                .retrieve()
                .bodyToMono(HISTORY)
                .block(Duration.ofMinutes(1)));
    }

    private static DashboardSnapshot snapshot(final SampleNode node) {
        // WebClient, not WebTestClient: the stream never ends, and only WebClient cancels it quietly
        final ServerSentEvent<DashboardSnapshot> event = WebClient.create(node.url())
                .get()
                .uri("/dashboard/events")
                .accept(MediaType.TEXT_EVENT_STREAM)
                .retrieve()
                .bodyToFlux(EVENT)
                .blockFirst(Duration.ofMinutes(1));
        assertThat(event).isNotNull();
        assertThat(Objects.requireNonNull(event).event()).isEqualTo("snapshot");
        return Objects.requireNonNull(event.data(), "a snapshot event carries a snapshot");
    }

    private static DashboardSnapshot.Engine engine(final DashboardSnapshot snapshot, final String name) {
        return snapshot.engines().stream()
                .filter(engine -> engine.name().equals(name))
                .findFirst()
                .orElseThrow();
    }

    private static DashboardSnapshot.Nic nic(final DashboardSnapshot snapshot, final String engine) {
        return engine(snapshot, engine).nics().getFirst();
    }
}
