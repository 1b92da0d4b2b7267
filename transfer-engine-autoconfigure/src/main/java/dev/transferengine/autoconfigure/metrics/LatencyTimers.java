package dev.transferengine.autoconfigure.metrics;

import dev.transferengine.CompletionObserver;
import dev.transferengine.NetworkAddress;
import dev.transferengine.OperationKind;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

/**
 * The {@code transfer.engine.latency} timers of one engine, fed by its {@link CompletionObserver} records on the
 * engine's callback thread (the only thread that touches this object). Each (kind, outcome, peer) gets its timer
 * the first time it occurs, with the configured SLO buckets only (a dozen by default; Micrometer's percentile
 * histogram, some 70 to 120 buckets per series, is opt-in through
 * {@code management.metrics.distribution.percentiles-histogram.transfer.engine.latency}); after that a record looks
 * it up without allocating. The {@code peer} tag is the peer's transport and host without its port, which is
 * ephemeral unless the peer fixes its base port and would start new series on every restart. Peers beyond
 * {@code maxPeers} share the tag {@code peer=other}; scatter and barrier writes, which go to a peer group, carry
 * {@code peer=group}.
 */
final class LatencyTimers implements CompletionObserver {

    static final String NAME = TransferEngineMeterBinder.PREFIX + "latency";
    private static final OperationKind[] KINDS = OperationKind.values();
    /** Shortest latency the histogram resolves: a loopback write takes microseconds. */
    private static final Duration SHORTEST = Duration.ofNanos(1000);

    private static final Duration LONGEST = Duration.ofSeconds(60);

    private final MeterRegistry registry;
    private final String engine;
    private final List<Duration> slo;
    private final int maxPeers;
    private final HashMap<NetworkAddress, Timer[]> byPeer = new HashMap<>();
    private final Timer[] group = new Timer[KINDS.length * 2];
    private final Timer[] other = new Timer[KINDS.length * 2];

    LatencyTimers(final MeterRegistry registry, final String engine, final List<Duration> slo, final int maxPeers) {
        this.registry = registry;
        this.engine = engine;
        this.slo = List.copyOf(slo);
        this.maxPeers = maxPeers;
    }

    @Override
    @SuppressWarnings("EnumOrdinal") // a flat table of timers indexed by kind: no EnumMap lookup per completion
    public void onCompletion(
            final OperationKind kind,
            final @Nullable NetworkAddress peer,
            final long bytes,
            final long nanos,
            final boolean success) {
        final int slot = kind.ordinal() * 2 + (success ? 0 : 1);
        final Timer[] timers = timers(peer);
        Timer timer = timers[slot];
        if (timer == null) {
            timer = register(kind, success, peerTag(peer, timers));
            timers[slot] = timer;
        }
        timer.record(nanos, TimeUnit.NANOSECONDS);
    }

    private Timer[] timers(final @Nullable NetworkAddress peer) {
        if (peer == null) {
            return group;
        }
        final Timer[] known = byPeer.get(peer);
        if (known != null) {
            return known;
        }
        if (byPeer.size() >= maxPeers) {
            return other;
        }
        final Timer[] created = new Timer[KINDS.length * 2];
        byPeer.put(peer, created);
        return created;
    }

    @SuppressWarnings("ReferenceEquality") // identity on purpose: which of the tables it is, not equal contents
    private String peerTag(final @Nullable NetworkAddress peer, final Timer[] timers) {
        if (timers == group) {
            return "group";
        }
        return timers == other || peer == null ? "other" : host(peer);
    }

    /** {@code tcp://10.0.0.5:7400} becomes {@code tcp://10.0.0.5}; a form without a port stays as it is. */
    static String host(final NetworkAddress peer) {
        final String described = peer.describe();
        final int scheme = described.indexOf("://");
        final int colon = described.lastIndexOf(':');
        if (scheme < 0 || colon <= scheme + 2 || described.endsWith("]")) {
            return described;
        }
        for (int i = colon + 1; i < described.length(); i++) {
            if (!Character.isDigit(described.charAt(i))) {
                return described;
            }
        }
        return colon == described.length() - 1 ? described : described.substring(0, colon);
    }

    private Timer register(final OperationKind kind, final boolean success, final String peer) {
        return Timer.builder(NAME)
                .description("Time from submission to the end of write requests and sends, by kind, outcome and peer")
                .tag("engine", engine)
                .tag("kind", kind.name().toLowerCase(Locale.ROOT).replace('_', '-'))
                .tag("outcome", success ? "success" : "failure")
                .tag("peer", peer)
                .minimumExpectedValue(SHORTEST)
                .maximumExpectedValue(LONGEST)
                .serviceLevelObjectives(slo.toArray(Duration[]::new))
                .register(registry);
    }
}
