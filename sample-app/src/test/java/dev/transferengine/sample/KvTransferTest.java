package dev.transferengine.sample;

import dev.transferengine.sample.kv.KvReceipt;
import dev.transferengine.sample.kv.KvTransferReport;

import java.util.Objects;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A prefill and a decode instance in this JVM, talking HTTP and tcp over loopback. */
class KvTransferTest {

    private static SampleNode decode;
    private static SampleNode prefill;

    @BeforeAll
    static void start() {
        decode = SampleNode.start(Role.DECODE);
        prefill = SampleNode.start(
                Role.PREFILL, "sample.peers.decode=" + decode.url(), "sample.peers.nowhere=http://127.0.0.1:1");
    }

    @AfterAll
    static void stop() {
        prefill.close();
        decode.close();
    }

    @Test
    void transfersEveryLayerAndDecodeVerifiesIt() {
        final KvTransferReport report = transfer(100);

        // 100 tokens at 16 per page: 7 pages in each of the 8 layers
        assertThat(report.pages()).isEqualTo(7);
        assertThat(report.bytes()).isEqualTo(8L * 7 * 4096);
        assertThat(report.layers()).extracting(KvTransferReport.Layer::layer).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(report.layers())
                .allSatisfy(layer -> assertThat(layer.writtenMillis()).isGreaterThanOrEqualTo(layer.computedMillis()));
        assertThat(report.verified()).isTrue();
        assertThat(report.decode().bytes()).isEqualTo(report.bytes());
        assertThat(report.decode().layers()).hasSize(8).allSatisfy(layer -> assertThat(layer.matches())
                .isTrue());
    }

    @Test
    void consecutiveTransfersUseOtherPagesAndStillVerify() {
        final KvReceipt first = transfer(256).decode();
        final KvReceipt second = transfer(17).decode();

        assertThat(first.pages()).isEqualTo(16);
        assertThat(second.pages()).isEqualTo(2);
        assertThat(first.verified()).isTrue();
        assertThat(second.verified()).isTrue();
        assertThat(second.id()).isNotEqualTo(first.id());
    }

    @Test
    void refusesMoreTokensThanALayerHolds() {
        prefill.client()
                .post()
                .uri("/kv/transfer?tokens={tokens}&decode=decode", 16 * 16 + 1)
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.error")
                .isEqualTo("IllegalArgumentException");
    }

    @Test
    void reportsAnUnreachableDecodeAsBadGateway() {
        prefill.client()
                .post()
                .uri("/kv/transfer?tokens=16&decode=nowhere")
                .exchange()
                .expectStatus()
                .isEqualTo(502);
    }

    @Test
    void countsTheBytesInTheMetrics() {
        transfer(64);

        prefill.client()
                .get()
                .uri("/actuator/prometheus")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .value(
                        body -> assertThat(body)
                                .containsPattern(
                                        "transfer_engine_bytes_total\\{direction=\"out\",engine=\"transferEngine\",nic=\"0\\.0\"} [1-9]"));
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
