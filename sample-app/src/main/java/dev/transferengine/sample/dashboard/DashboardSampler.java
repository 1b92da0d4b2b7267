package dev.transferengine.sample.dashboard;

import dev.transferengine.EngineMetrics;
import dev.transferengine.NicCounter;
import dev.transferengine.NicInfo;
import dev.transferengine.TransferEngine;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;

/** Takes {@link DashboardSnapshot}s of the application's engines and of its meter registry. */
final class DashboardSampler {

    private final Map<String, TransferEngine> engines;
    private final MeterRegistry registry;
    private final String kvMode;

    /**
     * @param engines  every engine bean, by bean name, in the order to show them
     * @param registry where the latency timers are
     * @param kvMode   {@code push} or {@code pull}, shown as it is
     */
    DashboardSampler(final Map<String, TransferEngine> engines, final MeterRegistry registry, final String kvMode) {
        this.engines = new LinkedHashMap<>(engines);
        this.registry = registry;
        this.kvMode = kvMode;
    }

    /**
     * The engines' totals and the timers' percentiles now, without rates ({@link DashboardHistory} adds them).
     *
     * @param timeMillis the time to stamp it with, milliseconds since the epoch
     * @return the snapshot
     */
    DashboardSnapshot snapshot(final long timeMillis) {
        final List<DashboardSnapshot.Engine> views = new ArrayList<>(engines.size());
        engines.forEach((name, engine) -> views.add(engine(name, engine)));
        return new DashboardSnapshot(timeMillis, kvMode, views, latencies());
    }

    private static DashboardSnapshot.Engine engine(final String name, final TransferEngine engine) {
        final EngineMetrics metrics = engine.metrics();
        final List<DashboardSnapshot.Nic> nics =
                engine.nics().stream().map(nic -> nic(nic, metrics)).toList();
        final List<DashboardSnapshot.Peer> peers = engine.peers().stream()
                .map(peer -> new DashboardSnapshot.Peer(
                        peer.group() + "." + peer.nic(),
                        peer.address().describe(),
                        peer.state().name(),
                        peer.lastError()))
                .toList();
        return new DashboardSnapshot.Engine(
                name,
                engine.transport(),
                engine.mainAddress().describe(),
                engine.isHealthy(),
                metrics.inFlight(),
                nics,
                peers);
    }

    private static DashboardSnapshot.Nic nic(final NicInfo nic, final EngineMetrics metrics) {
        final int g = nic.group();
        final int n = nic.nic();
        return new DashboardSnapshot.Nic(
                g + "." + n,
                nic.address().describe(),
                nic.healthy(),
                metrics.counter(g, n, NicCounter.BYTES_WRITTEN),
                metrics.counter(g, n, NicCounter.BYTES_RECEIVED),
                metrics.counter(g, n, NicCounter.IMMS),
                metrics.counter(g, n, NicCounter.WRITES),
                DashboardSnapshot.Rates.NONE);
    }

    /** Every timer configured to publish the median, p90 and p99 ({@code management.metrics.distribution.percentiles}). */
    private List<DashboardSnapshot.Latency> latencies() {
        final List<DashboardSnapshot.Latency> latencies = new ArrayList<>();
        for (final Meter meter : registry.getMeters()) {
            if (!(meter instanceof Timer timer)) {
                continue;
            }
            final ValueAtPercentile[] percentiles = timer.takeSnapshot().percentileValues();
            final double p50 = millis(percentiles, 0.5);
            final double p90 = millis(percentiles, 0.9);
            final double p99 = millis(percentiles, 0.99);
            if (p50 >= 0 && p90 >= 0 && p99 >= 0) {
                latencies.add(new DashboardSnapshot.Latency(
                        TimerNames.readable(timer.getId()),
                        TimerNames.meter(timer.getId()),
                        timer.count(),
                        p50,
                        p90,
                        p99));
            }
        }
        latencies.sort(Comparator.comparing(DashboardSnapshot.Latency::name));
        return latencies;
    }

    private static double millis(final ValueAtPercentile[] percentiles, final double percentile) {
        for (final ValueAtPercentile value : percentiles) {
            if (value.percentile() == percentile) {
                return value.value(TimeUnit.MILLISECONDS);
            }
        }
        return -1;
    }
}
