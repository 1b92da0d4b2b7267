package dev.transferengine.autoconfigure.web;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.SingleWrite;
import dev.transferengine.autoconfigure.observation.DefaultTransferObservationConvention;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.lang.foreign.Arena;

import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.annotation.Bean;
import org.springframework.http.server.reactive.observation.ServerRequestObservationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux request that writes through the auto-configured reactive engine: the write's observation is a child of
 * the HTTP server observation, found through the Reactor context, so a trace shows it inside the request.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@AutoConfigureWebTestClient
class TransferObservationWebFluxTests {

    @Autowired
    private WebTestClient http;

    @Autowired
    private TestObservationRegistry registry;

    @Test
    void transferObservationIsAChildOfTheHttpServerObservation() {
        http.post().uri("/copy").exchange().expectStatus().isOk();

        assertThat(registry)
                .hasObservationWithNameEqualTo(DefaultTransferObservationConvention.NAME)
                .that()
                .hasLowCardinalityKeyValue("kind", "write")
                .hasLowCardinalityKeyValue("outcome", "success")
                .hasParentObservationContextMatching(
                        parent -> parent instanceof final ServerRequestObservationContext request
                                && request.getCarrier().getPath().value().equals("/copy"),
                        "the HTTP server observation of POST /copy");
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class Service {

        @Bean
        TestObservationRegistry observationRegistry() {
            return TestObservationRegistry.create();
        }

        @Bean
        CopyController copyController(final ReactiveTransferEngine engine) {
            return new CopyController(engine);
        }
    }

    /** Copies 4 KiB from one region of the engine into another, per request. */
    @RestController
    static final class CopyController {

        private final ReactiveTransferEngine engine;
        private final MemoryRegion src;
        private final MemoryRegion dst;

        CopyController(final ReactiveTransferEngine engine) {
            this.engine = engine;
            final Arena arena = Arena.ofAuto();
            this.src = engine.engine().register(arena.allocate(4096, 4096), Device.host());
            this.dst = engine.engine().register(arena.allocate(4096, 4096), Device.host());
        }

        @PostMapping("/copy")
        Mono<String> copy() {
            return engine.write(SingleWrite.of(src, 0, 4096, dst.descriptor(), 0))
                    .thenReturn("copied");
        }
    }
}
