package dev.transferengine.sample.dashboard;

import dev.transferengine.TransferEngine;
import dev.transferengine.sample.SampleProperties;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;

/**
 * The dashboard's data: {@code GET /dashboard/events} streams a {@link DashboardSnapshot} every
 * {@code sample.dashboard.interval} as Server-Sent Events. The page itself is {@code static/index.html}, served at
 * {@code /}.
 */
@RestController
class DashboardController {

    private final DashboardSampler sampler;
    private final Duration interval;

    DashboardController(
            final Map<String, TransferEngine> engines,
            final MeterRegistry registry,
            final SampleProperties properties) {
        this.sampler = new DashboardSampler(
                engines, registry, properties.kv().mode().name().toLowerCase(Locale.ROOT));
        this.interval = properties.dashboard().interval();
    }

    @GetMapping(path = "/dashboard/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    Flux<ServerSentEvent<DashboardSnapshot>> events() {
        return Flux.interval(Duration.ZERO, interval).onBackpressureDrop().map(tick -> ServerSentEvent.builder(
                        sampler.snapshot())
                .event("snapshot")
                .build());
    }
}
