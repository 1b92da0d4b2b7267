package dev.transferengine.sample.moe;

import dev.transferengine.sample.Role;
import dev.transferengine.sample.SampleNode;
import dev.transferengine.sample.dashboard.DashboardSnapshot;

import java.time.Duration;
import java.util.Objects;

import org.junit.jupiter.api.Test;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The {@code moe} role: layers checked against the reference, shown on the dashboard, and a dead expert named. */
class MoeNodeTest {

    private static final ParameterizedTypeReference<ServerSentEvent<DashboardSnapshot>> EVENT =
            new ParameterizedTypeReference<>() {};

    @Test
    void layersMatchTheReferenceAndTheDashboardShowsThem() {
        try (SampleNode node =
                SampleNode.start(Role.MOE, "sample.moe.interval=20ms", "sample.dashboard.interval=100ms")) {
            final MoeNode moe = node.bean(MoeNode.class);
            await().atMost(Duration.ofMinutes(1)).until(() -> moe.verifiedLayers() >= 3 || moe.lastFailure() != null);
            assertThat(moe.lastFailure()).isNull();

            final DashboardSnapshot snapshot = await().atMost(Duration.ofMinutes(1))
                    .until(() -> snapshot(node), s -> s.latencies().stream()
                            .anyMatch(latency -> latency.meter().equals("sample.moe.dispatch") && latency.count() > 0));

            assertThat(snapshot.latencies())
                    .extracting(DashboardSnapshot.Latency::meter)
                    .contains("sample.moe.dispatch", "sample.moe.combine", "sample.moe.layer");
            assertThat(snapshot.engines().getFirst().peers()).isNotEmpty();
        }
    }

    @Test
    void anExpertRankThatDiesStopsTheLoopNamingIt() {
        try (SampleNode node = SampleNode.start(Role.MOE, "sample.moe.interval=20ms")) {
            final MoeNode moe = node.bean(MoeNode.class);
            await().atMost(Duration.ofMinutes(1)).until(() -> moe.verifiedLayers() >= 1 || moe.lastFailure() != null);

            moe.expertEngine(2).close();

            await().atMost(Duration.ofMinutes(1)).until(() -> moe.lastFailure() != null);
            assertThat(moe.lastFailure()).contains("expert rank 2 failed");
        }
    }

    private static DashboardSnapshot snapshot(final SampleNode node) {
        final ServerSentEvent<DashboardSnapshot> event = WebClient.create(node.url())
                .get()
                .uri("/dashboard/events")
                .header("Authorization", "Bearer " + SampleNode.TOKEN)
                .accept(MediaType.TEXT_EVENT_STREAM)
                .retrieve()
                .bodyToFlux(EVENT)
                .blockFirst(Duration.ofMinutes(1));
        return Objects.requireNonNull(Objects.requireNonNull(event).data(), "a snapshot event carries a snapshot");
    }
}
