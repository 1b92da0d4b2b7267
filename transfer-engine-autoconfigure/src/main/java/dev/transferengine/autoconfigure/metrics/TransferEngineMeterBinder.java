package dev.transferengine.autoconfigure.metrics;

import dev.transferengine.EngineCounter;
import dev.transferengine.EngineMetrics;
import dev.transferengine.NicCounter;
import dev.transferengine.PeerInfo;
import dev.transferengine.TransferEngine;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

/**
 * Meters over an engine's {@link EngineMetrics}, all created once in {@link #bindTo(MeterRegistry)}: each reads a
 * counter of the engine when the registry polls, so transfers themselves never touch Micrometer. Names start with
 * {@code transfer.engine.} (Prometheus: {@code transfer_engine_*}); NICs are tagged {@code nic=<group>.<nic>}.
 */
public final class TransferEngineMeterBinder implements MeterBinder {

    static final String PREFIX = "transfer.engine.";
    private static final String BYTES = "Payload bytes per NIC: out = written and sent, in = placed into local memory";
    private static final String NIC_OPERATIONS = "Work requests each NIC completed, by kind";

    private final TransferEngine engine;
    private final @Nullable ReactiveTransferEngine reactive;

    /**
     * @param reactive the facade whose posted receive buffers are gauged, or null when there is none
     */
    public TransferEngineMeterBinder(final TransferEngine engine, final @Nullable ReactiveTransferEngine reactive) {
        this.engine = engine;
        this.reactive = reactive;
    }

    @Override
    public void bindTo(final MeterRegistry registry) {
        final EngineMetrics metrics = engine.metrics();
        bindOperations(registry, metrics);
        bindErrors(registry, metrics);
        bindNics(registry, metrics);
        FunctionTimer.builder(PREFIX + "write.latency", metrics, EngineMetrics::latencyCount,
                EngineMetrics::latencyTotalNanos, TimeUnit.NANOSECONDS)
            .description("Time from submit to completion of write requests, as the callback thread sees it")
            .register(registry);
        TimeGauge.builder(PREFIX + "write.latency.max", metrics, TimeUnit.NANOSECONDS,
                EngineMetrics::latencyMaxNanos)
            .description("Longest recorded write request latency")
            .register(registry);
        Gauge.builder(PREFIX + "in.flight", metrics, EngineMetrics::inFlight)
            .description("Requests and sends accepted and not yet ended")
            .baseUnit("operations")
            .register(registry);
        Gauge.builder(PREFIX + "peers", engine, TransferEngineMeterBinder::reachablePeers)
            .description("Peers the NICs talk to, by reachability")
            .tag("state", "reachable")
            .register(registry);
        Gauge.builder(PREFIX + "peers", engine, TransferEngineMeterBinder::unreachablePeers)
            .description("Peers the NICs talk to, by reachability")
            .tag("state", "unreachable")
            .register(registry);
        if (reactive != null) {
            Gauge.builder(PREFIX + "receive.buffers.free", reactive, ReactiveTransferEngine::postedReceives)
                .description("Receive buffers posted by reactive subscribers and waiting for a message")
                .baseUnit("buffers")
                .register(registry);
        }
    }

    private static void bindOperations(final MeterRegistry registry, final EngineMetrics metrics) {
        operation(registry, metrics, "write", "success", EngineCounter.REQUESTS_DONE);
        operation(registry, metrics, "write", "failure", EngineCounter.REQUESTS_FAILED);
        operation(registry, metrics, "send", "success", EngineCounter.SENDS_DONE);
        operation(registry, metrics, "send", "failure", EngineCounter.SENDS_FAILED);
        operation(registry, metrics, "receive", "success", EngineCounter.RECEIVES);
        FunctionCounter.builder(PREFIX + "operations.submitted", metrics,
                m -> m.counter(EngineCounter.REQUESTS_SUBMITTED))
            .description(EngineCounter.REQUESTS_SUBMITTED.description())
            .baseUnit("operations")
            .register(registry);
    }

    private static void operation(final MeterRegistry registry, final EngineMetrics metrics, final String op,
                                  final String outcome, final EngineCounter counter) {
        FunctionCounter.builder(PREFIX + "operations", metrics, m -> m.counter(counter))
            .description("Operations that ended, by kind and outcome")
            .baseUnit("operations")
            .tag("op", op)
            .tag("outcome", outcome)
            .register(registry);
    }

    private static void bindErrors(final MeterRegistry registry, final EngineMetrics metrics) {
        error(registry, metrics, "timeout", EngineCounter.REQUESTS_TIMED_OUT);
        error(registry, metrics, "back-pressure", EngineCounter.BACK_PRESSURE);
        error(registry, metrics, "callback", EngineCounter.CALLBACK_ERRORS);
        error(registry, metrics, "worker", EngineCounter.WORKER_ERRORS);
    }

    private static void error(final MeterRegistry registry, final EngineMetrics metrics, final String kind,
                              final EngineCounter counter) {
        FunctionCounter.builder(PREFIX + "errors", metrics, m -> m.counter(counter))
            .description("Errors, by kind: timed-out requests, refused submissions, failing callbacks, worker faults")
            .tag("kind", kind)
            .register(registry);
    }

    private void bindNics(final MeterRegistry registry, final EngineMetrics metrics) {
        for (int g = 0; g < engine.groupCount(); g++) {
            for (int n = 0; n < engine.nicCount(g); n++) {
                final NicMeters nic = new NicMeters(registry, metrics, g, n);
                nic.counter(NicCounter.BYTES_WRITTEN, "bytes", BYTES, BaseUnits.BYTES, "direction", "out");
                nic.counter(NicCounter.BYTES_RECEIVED, "bytes", BYTES, BaseUnits.BYTES, "direction", "in");
                nic.counter(NicCounter.WRITES, "nic.operations", NIC_OPERATIONS, "operations", "op", "write");
                nic.counter(NicCounter.SENDS, "nic.operations", NIC_OPERATIONS, "operations", "op", "send");
                nic.counter(NicCounter.RECEIVES, "nic.operations", NIC_OPERATIONS, "operations", "op", "receive");
                nic.counter(NicCounter.WRITE_ERRORS, "nic.errors", "Writes each NIC reported failed", "errors",
                    "op", "write");
                nic.counter(NicCounter.IMMS, "imm.events", "Imm events each NIC received", "events", "op", "imm");
            }
        }
    }

    /** Registers the counters of one NIC, tagged {@code nic=<group>.<nic>}. */
    private record NicMeters(MeterRegistry registry, EngineMetrics metrics, int group, int nic) {

        void counter(final NicCounter counter, final String name, final String description, final String unit,
                     final String tagKey, final String tagValue) {
            FunctionCounter.builder(PREFIX + name, metrics, m -> m.counter(group, nic, counter))
                .description(description)
                .baseUnit(unit)
                .tag("nic", group + "." + nic)
                .tag(tagKey, tagValue)
                .register(registry);
        }
    }

    private static double reachablePeers(final TransferEngine engine) {
        return engine.peers().stream().filter(peer -> !peer.unreachable()).count();
    }

    private static double unreachablePeers(final TransferEngine engine) {
        return engine.peers().stream().filter(PeerInfo::unreachable).count();
    }
}
