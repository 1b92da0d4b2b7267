package dev.transferengine.sample;

import dev.transferengine.sample.weights.InferenceReceipt;
import dev.transferengine.sample.weights.PushReport;

import java.util.Objects;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A trainer and two inference instances in this JVM. */
class WeightPushTest {

    private static SampleNode first;
    private static SampleNode second;
    private static SampleNode trainer;

    @BeforeAll
    static void start() {
        first = SampleNode.start(Role.INFERENCE);
        second = SampleNode.start(Role.INFERENCE);
        trainer = SampleNode.start(
                Role.TRAINER, "sample.peers.first=" + first.url(), "sample.peers.second=" + second.url());
    }

    @AfterAll
    static void stop() {
        trainer.close();
        second.close();
        first.close();
    }

    @Test
    void pushesEveryTensorToEveryNodeAndEachVerifiesIt() {
        final PushReport report = push("first,second");

        assertThat(report.nodes()).containsExactly(first.url(), second.url());
        assertThat(report.tensors()).isEqualTo(4);
        assertThat(report.bytesPerNode()).isEqualTo(4 * 256 * 1024);
        assertThat(report.totalBytes()).isEqualTo(2 * 4 * 256 * 1024);
        assertThat(report.gbPerSecond()).isPositive();
        assertThat(report.receipts()).hasSize(2).allSatisfy(receipt -> {
            assertThat(receipt.version()).isEqualTo(report.version());
            assertThat(receipt.tensors())
                    .extracting(InferenceReceipt.Tensor::name)
                    .containsExactly("layers.0.weight", "layers.1.weight", "layers.2.weight", "layers.3.weight");
            assertThat(receipt.tensors())
                    .allSatisfy(tensor -> assertThat(tensor.matches()).isTrue());
        });
        assertThat(report.verified()).isTrue();
    }

    @Test
    void everyPushCarriesANewVersionOfTheTensors() {
        final PushReport one = push("first,second");
        final PushReport two = push("first,second");
        final PushReport toOneNode = push("second");

        assertThat(two.version()).isGreaterThan(one.version());
        assertThat(two.receipts().getFirst().tensors().getFirst().checksum())
                .isNotEqualTo(one.receipts().getFirst().tensors().getFirst().checksum());
        assertThat(two.verified()).isTrue();
        assertThat(toOneNode.receipts()).hasSize(1);
        assertThat(toOneNode.verified()).isTrue();
    }

    @Test
    void refusesAPushWithoutNodes() {
        trainer.client()
                .post()
                .uri("/weights/push?inference=")
                .exchange()
                .expectStatus()
                .is4xxClientError();
    }

    @Test
    void refusesANodeThatIsNotAConfiguredPeer() {
        trainer.client()
                .post()
                .uri("/weights/push?inference={nodes}", first.url())
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.message")
                .value(message -> assertThat((String) message).contains("no peer named", "[first, second]"));
    }

    private static PushReport push(final String nodes) {
        return Objects.requireNonNull(trainer.client()
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
