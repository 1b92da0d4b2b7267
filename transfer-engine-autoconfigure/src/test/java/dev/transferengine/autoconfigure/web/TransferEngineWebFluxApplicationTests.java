package dev.transferengine.autoconfigure.web;

import dev.transferengine.Device;
import dev.transferengine.ImmWrite;
import dev.transferengine.MemoryRegion;
import dev.transferengine.Routing;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux service with the starter's auto-configuration: the auto-configured engine and a second one built here
 * transfer bytes both ways over loopback, then health, Prometheus and the transferengine endpoint are read over HTTP.
 */
@SpringBootTest(
        webEnvironment = WebEnvironment.RANDOM_PORT,
        properties = {
            "management.endpoints.web.exposure.include=health,prometheus,transferengine",
            "management.endpoint.health.show-details=always",
            "transfer-engine.groups[0].nics=2",
            // Spring Data Redis is on this module's class path for the Redis registry; no Redis runs for this test
            "management.health.redis.enabled=false"
        })
@AutoConfigureWebTestClient
class TransferEngineWebFluxApplicationTests {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int SIZE = 64 * 1024;

    @Autowired
    private ReactiveTransferEngine service;

    @Autowired
    private WebTestClient http;

    private final Arena arena = Arena.ofShared();
    private TransferEngine peer;
    private MemoryRegion serviceRegion;

    @BeforeEach
    void transferBothWays() {
        peer = TransferEngine.builder().group(2).build();
        final ReactiveTransferEngine remote = new ReactiveTransferEngine(peer);
        serviceRegion = service.engine().register(arena.allocate(SIZE, 4096), Device.host());
        final MemoryRegion peerRegion = peer.register(arena.allocate(SIZE, 4096), Device.host());

        StepVerifier.create(service.write(SingleWrite.of(serviceRegion, 0, SIZE, peerRegion.descriptor(), 0)
                                .withRouting(Routing.sharded(2))
                                .withImm(1))
                        .then(remote.expectImm(1, 2)))
                .expectComplete()
                .verify(WAIT);
        StepVerifier.create(remote.write(SingleWrite.of(peerRegion, 0, SIZE, serviceRegion.descriptor(), 0))
                        .then(remote.write(ImmWrite.of(serviceRegion.descriptor(), 2)))
                        .then(service.expectImm(2, 1)))
                .expectComplete()
                .verify(WAIT);
    }

    @AfterEach
    void closePeer() {
        service.engine().deregister(serviceRegion);
        peer.close();
        arena.close();
    }

    @Test
    void healthIsUpWithTheEnginesNics() {
        http.get()
                .uri("/actuator/health")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .jsonPath("$.status")
                .isEqualTo("UP")
                .jsonPath("$.components.transferEngine.status")
                .isEqualTo("UP")
                .jsonPath("$.components.transferEngine.details.transport")
                .isEqualTo("tcp")
                .jsonPath("$.components.transferEngine.details.groups.0.nics.1.status")
                .isEqualTo("UP");
    }

    @Test
    void prometheusShowsTheTransferEngineMetersWithTheBytesMoved() {
        final String scrape = http.get()
                .uri("/actuator/prometheus")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();

        assertThat(scrape)
                .contains(
                        "transfer_engine_operations_total",
                        "transfer_engine_nic_work_requests_total",
                        "transfer_engine_in_flight{",
                        "transfer_engine_imm_events_total",
                        "transfer_engine_errors_total",
                        "transfer_engine_receive_buffers{",
                        "transfer_engine_latency_seconds_bucket{");
        assertThat(scrape)
                .doesNotContain("_operations_operations", "_buffers_buffers", "transfer_engine_write_latency");
        assertThat(bytes(scrape, "out")).isGreaterThan(0);
        assertThat(bytes(scrape, "in")).isGreaterThan(0);
    }

    @Test
    void transferEngineEndpointDescribesTheEngine() {
        http.get()
                .uri("/actuator/transferengine")
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .jsonPath("$.engines.transferEngine.transport")
                .isEqualTo("tcp")
                .jsonPath("$.engines.transferEngine.mainAddress")
                .isEqualTo(service.engine().mainAddress().describe())
                .jsonPath("$.engines.transferEngine.groups[0].nics.length()")
                .isEqualTo(2)
                .jsonPath("$.engines.transferEngine.regions[0].length")
                .isEqualTo(SIZE)
                .jsonPath("$.engines.transferEngine.counters.requests-done")
                .value(done -> assertThat(((Number) done).longValue()).isPositive());
    }

    /** Sum of {@code transfer_engine_bytes_total} over the service's NICs in one direction. */
    private static double bytes(final String scrape, final String direction) {
        final Matcher matcher = Pattern.compile("^transfer_engine_bytes_total\\{([^}]*)} (\\S+)$", Pattern.MULTILINE)
                .matcher(scrape);
        double sum = 0;
        while (matcher.find()) {
            if (matcher.group(1).contains("direction=\"" + direction + "\"")) {
                sum += Double.parseDouble(matcher.group(2));
            }
        }
        return sum;
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Service {}
}
