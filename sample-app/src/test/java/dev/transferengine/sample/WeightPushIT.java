package dev.transferengine.sample;

import dev.transferengine.sample.weights.PushReport;

import java.util.Objects;

import org.junit.jupiter.api.Test;
import org.testcontainers.containers.Network;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

import static org.assertj.core.api.Assertions.assertThat;

/** A trainer and two inference nodes in three containers: a weight push verified end to end. */
@Testcontainers(disabledWithoutDocker = true)
class WeightPushIT {

    private static final Network NETWORK = Network.newNetwork();

    @Container
    private static final SampleContainer FIRST = new SampleContainer(Role.INFERENCE, "inference-a", NETWORK);

    @Container
    private static final SampleContainer SECOND = new SampleContainer(Role.INFERENCE, "inference-b", NETWORK);

    @Container
    private static final SampleContainer TRAINER = new SampleContainer(Role.TRAINER, "trainer", NETWORK)
            .withPeer("first", FIRST)
            .withPeer("second", SECOND);

    @Test
    void pushesTheTensorsToBothNodesThroughAPeerGroup() {
        final String nodes = "first,second";
        final PushReport first = push(nodes);
        final PushReport second = push(nodes);

        for (final PushReport report : new PushReport[] {first, second}) {
            assertThat(report.tensors()).isEqualTo(8);
            assertThat(report.totalBytes()).isEqualTo(2L * 8 * 1024 * 1024);
            assertThat(report.receipts()).hasSize(2).allSatisfy(receipt -> assertThat(receipt.tensors())
                    .allSatisfy(t -> assertThat(t.matches()).isTrue()));
            assertThat(report.verified()).isTrue();
        }
        assertThat(second.version()).isGreaterThan(first.version());
    }

    private static PushReport push(final String nodes) {
        return Objects.requireNonNull(TRAINER.client()
                .post()
                .uri("/weights/push?inference={nodes}", nodes)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(PushReport.class)
                .returnResult()
                .getResponseBody());
    }
}
