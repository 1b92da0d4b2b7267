package dev.transferengine.sample;

import dev.transferengine.sample.kv.DecodeNode;
import dev.transferengine.sample.kv.KvTransferReport;
import dev.transferengine.sample.weights.InferenceNode;
import dev.transferengine.sample.weights.PushReport;

import java.util.Objects;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Wrong output is no success: a transfer or push that landed, but whose data the receiving node could not verify
 * (a {@link StrayWriter} overwrote it), answers 502 with the report that says what did not match.
 */
class UnverifiedOutputTest {

    private static StrayWriter stray;
    private static SampleNode decode;
    private static SampleNode prefill;
    private static SampleNode inference;
    private static SampleNode trainer;

    @BeforeAll
    static void start() {
        stray = new StrayWriter();
        decode = SampleNode.start(Role.DECODE, stray.before("/verify", context -> context.getBean(DecodeNode.class)
                .descriptor()
                .region()));
        prefill = SampleNode.start(Role.PREFILL, "sample.peers.decode=" + decode.url());
        inference = SampleNode.start(
                Role.INFERENCE, stray.before("/verification", context -> context.getBean(InferenceNode.class)
                        .descriptor()
                        .region()));
        trainer = SampleNode.start(Role.TRAINER, "sample.peers.inference=" + inference.url());
    }

    @AfterAll
    static void stop() {
        for (final SampleNode node : new SampleNode[] {trainer, inference, prefill, decode}) {
            if (node != null) {
                node.close();
            }
        }
        if (stray != null) {
            stray.close();
        }
    }

    @Test
    void aKvTransferDecodeCannotVerifyAnswersBadGatewayWithTheReport() {
        final KvTransferReport report = Objects.requireNonNull(prefill.client()
                .post()
                .uri("/kv/transfer?tokens=100&decode=decode")
                .exchange()
                .expectStatus()
                .isEqualTo(502)
                .expectBody(KvTransferReport.class)
                .returnResult()
                .getResponseBody());

        assertThat(report.verified()).isFalse();
        assertThat(report.bytes()).isPositive();
        assertThat(report.decode().layers()).hasSize(8).allSatisfy(layer -> assertThat(layer.matches())
                .isFalse());
    }

    @Test
    void aWeightPushANodeCannotVerifyAnswersBadGatewayWithTheReport() {
        final PushReport report = Objects.requireNonNull(trainer.client()
                .post()
                .uri("/weights/push?inference=inference")
                .exchange()
                .expectStatus()
                .isEqualTo(502)
                .expectBody(PushReport.class)
                .returnResult()
                .getResponseBody());

        assertThat(report.verified()).isFalse();
        assertThat(report.receipts()).singleElement().satisfies(receipt -> {
            assertThat(receipt.verified()).isFalse();
            assertThat(receipt.tensors()).isNotEmpty().allSatisfy(tensor -> assertThat(tensor.matches())
                    .isFalse());
        });
    }
}
