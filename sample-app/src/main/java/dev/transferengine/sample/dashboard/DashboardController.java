package dev.transferengine.sample.dashboard;

import dev.transferengine.TransferEngine;
import dev.transferengine.sample.SampleProperties;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The dashboard's data. One sampler takes a {@link DashboardSnapshot} every {@code sample.dashboard.interval}, from
 * start-up on, whether anyone watches or not, into the {@link DashboardHistory} that every viewer shares:
 * {@code GET /dashboard/history} is its last {@code sample.dashboard.history} (the page draws it first), and
 * {@code GET /dashboard/events} streams each new snapshot as Server-Sent Events, starting with the newest one. The
 * page itself is {@code static/index.html}, served at {@code /}.
 */
@RestController
class DashboardController implements SmartLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(DashboardController.class);

    private final DashboardSampler sampler;
    private final DashboardHistory history;
    private final Duration interval;
    private final Sinks.Many<DashboardSnapshot> updates =
            Sinks.many().multicast().directBestEffort();
    private @Nullable Disposable sampling;

    DashboardController(
            final Map<String, TransferEngine> engines,
            final MeterRegistry registry,
            final SampleProperties properties) {
        this.sampler = new DashboardSampler(
                engines, registry, properties.kv().mode().name().toLowerCase(Locale.ROOT));
        this.history = new DashboardHistory(
                properties.dashboard().rateWindow(), properties.dashboard().history());
        this.interval = properties.dashboard().interval();
    }

    @GetMapping(path = "/dashboard/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    Flux<ServerSentEvent<DashboardSnapshot>> events() {
        return Flux.concat(Mono.justOrEmpty(history.latest()), updates.asFlux())
                .onBackpressureLatest()
                .map(snapshot ->
                        ServerSentEvent.builder(snapshot).event("snapshot").build());
    }

    @GetMapping(path = "/dashboard/history", produces = MediaType.APPLICATION_JSON_VALUE)
    List<DashboardSnapshot> history() {
        return history.snapshots();
    }

    @Override
    public synchronized void start() {
        sampling = Flux.interval(Duration.ZERO, interval).onBackpressureDrop().subscribe(tick -> sample());
    }

    private void sample() {
        final long now = System.currentTimeMillis();
        final DashboardSnapshot last = history.latest();
        if (last != null && now <= last.timeMillis()) {
            return; // the wall clock stepped back: skip a tick rather than draw time backwards
        }
        try {
            updates.tryEmitNext(history.add(sampler.snapshot(now)));
        } catch (final RuntimeException e) {
            // one failed sample (an engine closing under it) must not end the sampling for good
            LOG.warn("dashboard sample failed: {}", e.toString());
        }
    }

    @Override
    public synchronized void stop() {
        final Disposable running = sampling;
        if (running != null) {
            running.dispose();
            sampling = null;
        }
        updates.tryEmitComplete();
    }

    @Override
    public synchronized boolean isRunning() {
        return sampling != null;
    }
}
