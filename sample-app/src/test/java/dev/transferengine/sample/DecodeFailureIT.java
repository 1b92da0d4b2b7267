package dev.transferengine.sample;

import dev.transferengine.NetworkAddress;
import dev.transferengine.sample.kv.KvDescriptor;
import dev.transferengine.sample.kv.KvTransferReport;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.ResponseEntity;
import org.springframework.web.reactive.function.client.WebClient;
import org.testcontainers.containers.Network;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The decode container dies in the middle of a transfer: prefill's pending writes fail with
 * {@code PeerUnreachableException} (not a hang), prefill's health names the dead peer, and a transfer to a new
 * decode container under the same name succeeds.
 */
@Testcontainers(disabledWithoutDocker = true)
class DecodeFailureIT {

    private static final Logger LOG = LoggerFactory.getLogger(DecodeFailureIT.class);

    private static final Pattern BYTES_IN = Pattern.compile(
            "transfer_engine_bytes_total\\{direction=\"in\",engine=\"transferEngine\",nic=\"0\\.0\"} ([0-9.E]+)");

    private static final Network NETWORK = Network.newNetwork();

    @Container
    private static final SampleContainer DECODE = slow(new SampleContainer(Role.DECODE, "decode", NETWORK));

    /**
     * How prefill learns that decode died depends on the kernel: a reset on the open connection, or silence, or a
     * reconnect to an address that no longer answers. The two tcp deadlines that catch silence and a dead reconnect
     * are short and the operation timeout long, so that every path ends in PeerUnreachableException.
     */
    @Container
    private static final SampleContainer PREFILL = slow(new SampleContainer(Role.PREFILL, "prefill", NETWORK))
            .withEnv("TRANSFER_ENGINE_TIMEOUTS_OPERATION", "90s")
            .withEnv(
                    "SPRING_APPLICATION_JSON",
                    "{\"transfer-engine.options.[tcp.frameTimeoutMs]\":\"5000\","
                            + "\"transfer-engine.options.[tcp.handshakeTimeoutMs]\":\"3000\"}")
            .withPeer("decode", DECODE);

    private static @Nullable SampleContainer replacement;

    /** 32 layers of 250 ms compute: a transfer lasts about 8 s, time enough to kill decode in its middle. */
    private static SampleContainer slow(final SampleContainer container) {
        return container.withEnv("SAMPLE_KV_LAYERS", "32").withEnv("SAMPLE_KV_COMPUTE_TIME", "250ms");
    }

    @AfterAll
    static void stopReplacement() {
        if (replacement != null) {
            replacement.stop();
        }
    }

    @Test
    void failsThePendingTransferNamesThePeerAndRecoversWithANewDecode() throws Exception {
        // health names peers in their readable form (tcp://host:port), the descriptor carries the text form
        final String decodeAddress = NetworkAddress.parse(Objects.requireNonNull(DECODE.client()
                                .get()
                                .uri("/kv/descriptor")
                                .exchange()
                                .expectStatus()
                                .isOk()
                                .expectBody(KvDescriptor.class)
                                .returnResult()
                                .getResponseBody())
                        .address())
                .describe();

        final CompletableFuture<@Nullable ResponseEntity<String>> pending = WebClient.create(PREFILL.baseUrl())
                .post()
                .uri("/kv/transfer?tokens=256&decode=decode")
                .headers(headers -> headers.setBearerAuth(SampleNode.TOKEN))
                .exchangeToMono(response -> response.toEntity(String.class))
                .toFuture();

        // kill decode once the first layers landed, well before the last one
        await().atMost(Duration.ofMinutes(1)).until(() -> bytesIn(DECODE) > 0);
        assertThat(pending).isNotDone();
        DECODE.getDockerClient().killContainerCmd(DECODE.getContainerId()).exec();
        final long killed = System.nanoTime();

        final ResponseEntity<String> failed = Objects.requireNonNull(pending.get(2, TimeUnit.MINUTES));
        LOG.info(
                "prefill answered {} ms after decode was killed: {} {}",
                (System.nanoTime() - killed) / 1_000_000,
                failed.getStatusCode(),
                failed.getBody());
        assertThat(failed.getStatusCode().value()).isEqualTo(502);
        assertThat(failed.getBody()).contains("\"error\":\"PeerUnreachableException\"");

        await().atMost(Duration.ofMinutes(1)).untilAsserted(() -> PREFILL.client()
                .get()
                .uri("/actuator/health")
                .exchange()
                .expectBody()
                .jsonPath(
                        "$.components.transferEngine.details.unreachablePeers[?(@.address == '" + decodeAddress + "')]")
                .exists());

        // remove the dead container, so that its name (and the DNS record behind it, prefill's peer "decode") can pass
        // to the new one
        DECODE.stop();
        replacement = slow(new SampleContainer(Role.DECODE, "decode", NETWORK));
        replacement.start();
        final KvTransferReport report = Objects.requireNonNull(PREFILL.client()
                .post()
                .uri("/kv/transfer?tokens=256&decode=decode")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(KvTransferReport.class)
                .returnResult()
                .getResponseBody());
        assertThat(report.verified()).isTrue();
    }

    private static double bytesIn(final SampleContainer container) {
        final String body = Objects.requireNonNull(container
                .client()
                .get()
                .uri("/actuator/prometheus")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody());
        final Matcher matcher = BYTES_IN.matcher(body == null ? "" : body);
        return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
    }
}
