package dev.transferengine.sample;

import dev.transferengine.sample.kv.KvReceipt;
import dev.transferengine.sample.kv.KvTransferReport;

import java.util.Objects;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code sample.kv.mode=pull}: decode reads each layer's pages from prefill's read-only cache, then verifies. */
class KvPullTest {

    private static SampleNode decode;
    private static SampleNode prefill;

    @BeforeAll
    static void start() {
        decode = SampleNode.start(Role.DECODE, "sample.kv.mode=pull");
        prefill = SampleNode.start(Role.PREFILL, "sample.kv.mode=pull", "sample.peers.decode=" + decode.url());
    }

    @AfterAll
    static void stop() {
        prefill.close();
        decode.close();
    }

    @Test
    void decodePullsEveryLayerAndVerifiesItAsForAPush() {
        final KvTransferReport report = transfer(100);

        assertThat(report.pages()).isEqualTo(7);
        assertThat(report.verified()).isTrue();
        assertThat(report.decode().bytes()).isEqualTo(report.bytes());
        assertThat(report.decode().layers()).hasSize(8).allSatisfy(layer -> assertThat(layer.matches())
                .isTrue());
    }

    @Test
    void consecutivePullsUseOtherPagesAndStillVerify() {
        final KvReceipt first = transfer(256).decode();
        final KvReceipt second = transfer(17).decode();

        assertThat(first.verified()).isTrue();
        assertThat(second.verified()).isTrue();
        assertThat(second.id()).isNotEqualTo(first.id());
    }

    private static KvTransferReport transfer(final int tokens) {
        return Objects.requireNonNull(prefill.client()
                .post()
                .uri("/kv/transfer?tokens={tokens}&decode=decode", tokens)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(KvTransferReport.class)
                .returnResult()
                .getResponseBody());
    }
}
