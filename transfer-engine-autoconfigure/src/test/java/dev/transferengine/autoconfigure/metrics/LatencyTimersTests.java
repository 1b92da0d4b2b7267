package dev.transferengine.autoconfigure.metrics;

import dev.transferengine.NetworkAddress;
import dev.transferengine.OperationKind;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The latency timers as the callback thread feeds them: by kind, outcome and a bounded set of peers. */
class LatencyTimersTests {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final LatencyTimers timers = new LatencyTimers(registry, "prefill", List.of(Duration.ofMillis(1)), 2);

    @Test
    void sendsAndWritesGetSeparateTimersByOutcome() {
        timers.onCompletion(OperationKind.WRITE, peer(1), 4096, 2_000, true);
        timers.onCompletion(OperationKind.WRITE, peer(1), 4096, 3_000, true);
        timers.onCompletion(OperationKind.SEND, peer(1), 64, 5_000, true);
        timers.onCompletion(OperationKind.PAGED_WRITE, peer(1), 8192, 7_000, false);

        assertThat(timer("write", "success", "tcp://10.0.0.1").count()).isEqualTo(2);
        assertThat(timer("write", "success", "tcp://10.0.0.1").totalTime(TimeUnit.NANOSECONDS))
                .isEqualTo(5_000);
        assertThat(timer("send", "success", "tcp://10.0.0.1").count()).isEqualTo(1);
        assertThat(timer("paged-write", "failure", "tcp://10.0.0.1").count()).isEqualTo(1);
    }

    @Test
    void histogramHasTheSloBucket() {
        timers.onCompletion(OperationKind.WRITE, peer(1), 4096, 500_000, true);

        assertThat(timer("write", "success", "tcp://10.0.0.1").takeSnapshot().histogramCounts())
                .extracting(CountAtBucket::bucket)
                .contains((double) TimeUnit.MILLISECONDS.toNanos(1));
    }

    @Test
    void histogramHasOnlyTheSloBucketsUnlessPercentileHistogramsAreAskedFor() {
        timers.onCompletion(OperationKind.WRITE, peer(1), 4096, 500_000, true);

        assertThat(timer("write", "success", "tcp://10.0.0.1").takeSnapshot().histogramCounts())
                .extracting(CountAtBucket::bucket)
                .containsExactly((double) TimeUnit.MILLISECONDS.toNanos(1));
    }

    @Test
    void thePeerTagCarriesTheHostButNotThePortWhichChangesOnEveryRestart() {
        timers.onCompletion(OperationKind.WRITE, peer(1, 7400), 1, 1_000, true);
        timers.onCompletion(OperationKind.WRITE, peer(1, 41_233), 1, 1_000, true);

        assertThat(registry.get(LatencyTimers.NAME).tag("kind", "write").timers())
                .extracting(timer -> timer.getId().getTag("peer"))
                .containsExactly("tcp://10.0.0.1");
        assertThat(timer("write", "success", "tcp://10.0.0.1").count()).isEqualTo(2);
    }

    @Test
    void peersBeyondTheCapShareOtherAndGroupWritesAreGroup() {
        for (int p = 1; p <= 4; p++) {
            timers.onCompletion(OperationKind.WRITE, peer(p), 1, 1_000, true);
        }
        timers.onCompletion(OperationKind.SCATTER, null, 10, 1_000, true);

        assertThat(registry.get(LatencyTimers.NAME).tag("kind", "write").timers())
                .extracting(timer -> timer.getId().getTag("peer"))
                .containsExactlyInAnyOrder("tcp://10.0.0.1", "tcp://10.0.0.2", "other");
        assertThat(timer("write", "success", "other").count()).isEqualTo(2);
        assertThat(timer("scatter", "success", "group").count()).isEqualTo(1);
    }

    private Timer timer(final String kind, final String outcome, final String peer) {
        return registry.get(LatencyTimers.NAME)
                .tags("engine", "prefill", "kind", kind, "outcome", outcome, "peer", peer)
                .timer();
    }

    /** The tcp transport's address of 10.0.0.{last}:7400 (port little-endian). */
    private static NetworkAddress peer(final int last) {
        return peer(last, 7400);
    }

    /** The tcp transport's address of 10.0.0.{last}:{port} (port little-endian). */
    private static NetworkAddress peer(final int last, final int port) {
        return NetworkAddress.of("tcp", new byte[] {4, (byte) port, (byte) (port >> 8), 10, 0, 0, (byte) last});
    }
}
