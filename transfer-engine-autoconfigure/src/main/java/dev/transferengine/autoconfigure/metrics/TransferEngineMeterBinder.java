package dev.transferengine.autoconfigure.metrics;

import dev.transferengine.EngineCounter;
import dev.transferengine.EngineMetrics;
import dev.transferengine.NicCounter;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransportEvent;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Meters of every engine of the application, tagged {@code engine=<bean name>}. Counters and gauges read the
 * engine's own counters when the registry polls, so transfers never touch Micrometer for them; the latency timers
 * are fed on each engine's callback thread through a {@link dev.transferengine.CompletionObserver}. Names start
 * with {@code transfer.engine.} (Prometheus: {@code transfer_engine_*}); NICs are tagged {@code nic=<group>.<nic>}.
 * docs/spring-boot.md lists every meter.
 */
public final class TransferEngineMeterBinder implements MeterBinder {

    static final String PREFIX = "transfer.engine.";
    private static final String BYTES = "Payload bytes per NIC: out = written and sent, in = placed into local memory";
    /** One HELP text per transport-event meter: Prometheus keeps one per name, so each says what it counts. */
    private static final Map<String, String> TRANSPORT_EVENTS = Map.of(
            "handshakes.failed",
            "Handshakes that failed, by reason: a wrong or missing cluster key, a relayed or replayed proof, a TLS"
                    + " failure, a timeout",
            "refusals",
            "Connections and requests the transport refused at a bound, by reason: too many connections or pending"
                    + " handshakes, a full queue",
            "connections.closed",
            "Connections the transport closed on its own, by reason: idle, too slow, malformed frames",
            "peers.evicted",
            "Peers the transport forgot, by reason: unreachable too long, too many peers");

    private static final String OTHER_TRANSPORT_EVENTS =
            "What the transport stopped at a bound or a trust check, " + "by reason";
    private static final String WORK_REQUESTS = "Work requests each NIC completed, by kind";

    private final Map<String, TransferEngine> engines;
    private final Map<String, ReactiveTransferEngine> reactives;
    private final List<Duration> latencySlo;
    private final int maxPeerTags;

    /**
     * A binder of every engine's gauges, counters and latency timers, tagged with the bean name.
     *
     * @param engines     the engines, by bean name
     * @param reactives   the reactive facades, whose posted receive buffers are gauged under their engine
     * @param latencySlo  extra buckets of the latency histograms
     * @param maxPeerTags most distinct peers tagged on the latency timers of one engine; the rest are {@code other}
     */
    public TransferEngineMeterBinder(
            final Map<String, TransferEngine> engines,
            final Map<String, ReactiveTransferEngine> reactives,
            final List<Duration> latencySlo,
            final int maxPeerTags) {
        this.engines = Map.copyOf(engines);
        this.reactives = Map.copyOf(reactives);
        this.latencySlo = List.copyOf(latencySlo);
        this.maxPeerTags = maxPeerTags;
    }

    @Override
    public void bindTo(final MeterRegistry registry) {
        engines.forEach((name, engine) -> new EngineMeters(registry, name, engine).bind());
    }

    /** The meters of one engine. */
    private final class EngineMeters {

        private final MeterRegistry registry;
        private final String name;
        private final TransferEngine engine;
        private final EngineMetrics metrics;

        EngineMeters(final MeterRegistry registry, final String name, final TransferEngine engine) {
            this.registry = registry;
            this.name = name;
            this.engine = engine;
            this.metrics = engine.metrics();
        }

        void bind() {
            operation("write", "success", EngineCounter.REQUESTS_DONE);
            operation("write", "failure", EngineCounter.REQUESTS_FAILED);
            operation("send", "success", EngineCounter.SENDS_DONE);
            operation("send", "failure", EngineCounter.SENDS_FAILED);
            operation("receive", "success", EngineCounter.RECEIVES);
            error("timeout", EngineCounter.REQUESTS_TIMED_OUT);
            error("back-pressure", EngineCounter.BACK_PRESSURE);
            error("callback", EngineCounter.CALLBACK_ERRORS);
            error("worker", EngineCounter.WORKER_ERRORS);
            error("imm-refused", EngineCounter.IMMS_REFUSED);
            error("unobserved", EngineCounter.COMPLETIONS_UNOBSERVED);
            error("imm-abandoned-sent", EngineCounter.IMMS_ABANDONED_SENT);
            error("imm-abandoned", EngineCounter.IMMS_ABANDONED);
            error("imm-expired", EngineCounter.IMMS_EXPIRED);
            for (int g = 0; g < engine.groupCount(); g++) {
                for (int n = 0; n < engine.nicCount(g); n++) {
                    nic(g, n);
                }
            }
            Gauge.builder(PREFIX + "in.flight", metrics, EngineMetrics::inFlight)
                    .description("Write requests and sends accepted and not yet ended")
                    .tag("engine", name)
                    .register(registry);
            peers("reachable", false);
            peers("unreachable", true);
            Gauge.builder(PREFIX + "receive.buffers", this, EngineMeters::postedReceives)
                    .description("Receive buffers posted by reactive subscribers and waiting for a message")
                    .tag("engine", name)
                    .strongReference(true)
                    .register(registry);
            for (final TransportEvent event : engine.transportEvents()) {
                transportEvent(event.category(), event.reason());
            }
            metrics.addCompletionObserver(new LatencyTimers(registry, name, latencySlo, maxPeerTags));
        }

        private void operation(final String kind, final String outcome, final EngineCounter counter) {
            FunctionCounter.builder(PREFIX + "operations", metrics, m -> m.counter(counter))
                    .description("Operations that ended, by kind (write requests of any shape, sends, receives) and"
                            + " outcome")
                    .tag("engine", name)
                    .tag("kind", kind)
                    .tag("outcome", outcome)
                    .register(registry);
        }

        private void error(final String kind, final EngineCounter counter) {
            FunctionCounter.builder(PREFIX + "errors", metrics, m -> m.counter(counter))
                    .description("Errors, by kind: timed-out requests, refused submissions, failing callbacks, worker"
                            + " faults, imms refused over the unexpected-imm bound, completions the latency timers missed,"
                            + " negative acknowledgements sent and received")
                    .tag("engine", name)
                    .tag("kind", kind)
                    .register(registry);
        }

        private void nic(final int group, final int nic) {
            final Tags tags = Tags.of("engine", name, "nic", group + "." + nic);
            nicCounter(group, nic, NicCounter.BYTES_WRITTEN, "bytes", BYTES, tags.and("direction", "out"))
                    .baseUnit(BaseUnits.BYTES)
                    .register(registry);
            nicCounter(group, nic, NicCounter.BYTES_RECEIVED, "bytes", BYTES, tags.and("direction", "in"))
                    .baseUnit(BaseUnits.BYTES)
                    .register(registry);
            nicCounter(group, nic, NicCounter.WRITES, "nic.work.requests", WORK_REQUESTS, tags.and("kind", "write"))
                    .register(registry);
            nicCounter(group, nic, NicCounter.SENDS, "nic.work.requests", WORK_REQUESTS, tags.and("kind", "send"))
                    .register(registry);
            nicCounter(group, nic, NicCounter.RECEIVES, "nic.work.requests", WORK_REQUESTS, tags.and("kind", "receive"))
                    .register(registry);
            nicCounter(
                            group,
                            nic,
                            NicCounter.WRITE_ERRORS,
                            "nic.errors",
                            "Work requests each NIC reported failed",
                            tags.and("kind", "write"))
                    .register(registry);
            nicCounter(group, nic, NicCounter.IMMS, "imm.events", "Imm events each NIC received", tags)
                    .register(registry);
        }

        private FunctionCounter.Builder<EngineMetrics> nicCounter(
                final int group,
                final int nic,
                final NicCounter counter,
                final String meter,
                final String description,
                final Tags tags) {
            return FunctionCounter.builder(PREFIX + meter, metrics, m -> m.counter(group, nic, counter))
                    .description(description)
                    .tags(tags);
        }

        /** {@code transfer.engine.handshakes.failed}, {@code .refusals}, {@code .connections.closed}, {@code .peers.evicted}. */
        private void transportEvent(final String category, final String reason) {
            FunctionCounter.builder(PREFIX + category, engine, e -> count(e, category, reason))
                    .description(TRANSPORT_EVENTS.getOrDefault(category, OTHER_TRANSPORT_EVENTS))
                    .tag("engine", name)
                    .tag("reason", reason)
                    .register(registry);
        }

        private static double count(final TransferEngine engine, final String category, final String reason) {
            for (final TransportEvent event : engine.transportEvents()) {
                if (event.category().equals(category) && event.reason().equals(reason)) {
                    return event.count();
                }
            }
            return 0;
        }

        private void peers(final String state, final boolean unreachable) {
            Gauge.builder(PREFIX + "peers", engine, e -> e.peers().stream()
                            .filter(peer -> peer.unreachable() == unreachable)
                            .count())
                    .description("Peers the NICs talk to, by reachability")
                    .tag("engine", name)
                    .tag("state", state)
                    .register(registry);
        }

        @SuppressWarnings("ReferenceEquality") // identity on purpose: the facades over this very engine
        private double postedReceives() {
            return reactives.values().stream()
                    .filter(reactive -> reactive.engine() == engine)
                    .mapToInt(ReactiveTransferEngine::postedReceives)
                    .sum();
        }
    }
}
