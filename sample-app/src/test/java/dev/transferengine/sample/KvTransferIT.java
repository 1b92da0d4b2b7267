package dev.transferengine.sample;

import dev.transferengine.sample.kv.KvTransferReport;

import java.util.Objects;

import org.junit.jupiter.api.Test;
import org.testcontainers.containers.Network;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

import static org.assertj.core.api.Assertions.assertThat;

/** Decode and prefill in two containers on one network: a KV-cache transfer verified end to end. */
@Testcontainers(disabledWithoutDocker = true)
class KvTransferIT {

    private static final Network NETWORK = Network.newNetwork();

    @Container
    private static final SampleContainer DECODE = new SampleContainer(Role.DECODE, "decode", NETWORK);

    @Container
    private static final SampleContainer PREFILL =
            new SampleContainer(Role.PREFILL, "prefill", NETWORK).withPeer("decode", DECODE);

    @Test
    void transfersTheCacheLayerByLayerAcrossContainers() {
        final KvTransferReport report = Objects.requireNonNull(PREFILL.client()
                .post()
                .uri("/kv/transfer?tokens=500&decode=decode")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(KvTransferReport.class)
                .returnResult()
                .getResponseBody());

        // 500 tokens at 16 per page: 32 pages in each of the 16 layers of 16 KB pages
        assertThat(report.pages()).isEqualTo(32);
        assertThat(report.bytes()).isEqualTo(16L * 32 * 16 * 1024);
        assertThat(report.layers()).hasSize(16);
        assertThat(report.decode().layers()).hasSize(16).allSatisfy(layer -> assertThat(layer.matches())
                .isTrue());
        assertThat(report.verified()).isTrue();

        DECODE.client()
                .get()
                .uri("/actuator/health")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .jsonPath("$.components.transferEngine.status")
                .isEqualTo("UP");
    }
}
