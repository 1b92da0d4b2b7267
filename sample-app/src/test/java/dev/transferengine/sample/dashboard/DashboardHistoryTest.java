package dev.transferengine.sample.dashboard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Rates averaged over the window and the bounded history, on snapshots with chosen times and totals. */
class DashboardHistoryTest {

    private static final long MB = 1 << 20;

    @Test
    void burstsOnceASecondSampledTwiceASecondGiveASteadyRateInsteadOfAZigZag() {
        final DashboardHistory history = new DashboardHistory(Duration.ofSeconds(5), Duration.ofSeconds(60));
        final List<Double> rates = new ArrayList<>();
        long bytes = 0;
        for (int tick = 0; tick <= 60; tick++) {
            if (tick % 2 == 1) {
                bytes += 24 * MB; // the demo's burst, once a second, landing between two samples
            }
            rates.add(history.add(snapshot(tick * 500L, bytes, bytes / MB))
                    .engines()
                    .getFirst()
                    .nics()
                    .getFirst()
                    .rates()
                    .bytesIn());
        }
        // a two-sample rate would swing between 0 and 48 MB/s; once the window is full, every rate is 24 MB/s +- a
        // burst at either edge of the 5 s window (4.5 s of the 5 hold 5 bursts, the other 0.5 s 5 or 6)
        assertThat(rates.subList(10, rates.size()))
                .allSatisfy(rate -> assertThat(rate / MB).isBetween(24.0, 24.0 * 6 / 5));
        assertThat(rates.getFirst()).isZero();
    }

    @Test
    void keepsOnlyTheHistoryAndRefusesTimeGoingBack() {
        final DashboardHistory history = new DashboardHistory(Duration.ofSeconds(5), Duration.ofSeconds(60));
        for (int tick = 0; tick < 200; tick++) {
            history.add(snapshot(tick * 500L, tick, tick));
        }
        final List<DashboardSnapshot> kept = history.snapshots();
        assertThat(kept.getLast().timeMillis()).isEqualTo(199 * 500L);
        assertThat(kept.getFirst().timeMillis()).isEqualTo(199 * 500L - 60_000);
        assertThat(kept).hasSize(121);
        assertThat(history.latest()).isEqualTo(kept.getLast());
        assertThatThrownBy(() -> history.add(snapshot(199 * 500L, 0, 0)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not later than the last one");
    }

    @Test
    void aCounterThatStartsAgainGivesNoNegativeRate() {
        final DashboardHistory history = new DashboardHistory(Duration.ofSeconds(5), Duration.ofSeconds(60));
        history.add(snapshot(0, 10 * MB, 10));
        final DashboardSnapshot.Rates rates = history.add(snapshot(1000, 0, 0))
                .engines()
                .getFirst()
                .nics()
                .getFirst()
                .rates();
        assertThat(rates.bytesIn()).isZero();
        assertThat(rates.imms()).isZero();
        assertThat(rates.windowMillis()).isEqualTo(1000);
    }

    @Test
    void aRateWindowLongerThanTheHistoryIsRefused() {
        assertThatThrownBy(() -> new DashboardHistory(Duration.ofSeconds(10), Duration.ofSeconds(5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rate window <= history");
    }

    private static DashboardSnapshot snapshot(final long timeMillis, final long bytesIn, final long imms) {
        final DashboardSnapshot.Nic nic = new DashboardSnapshot.Nic(
                "0.0", "tcp://127.0.0.1:7400", true, 0, bytesIn, imms, 0, DashboardSnapshot.Rates.NONE);
        final DashboardSnapshot.Engine engine = new DashboardSnapshot.Engine(
                "decodeEngine", "tcp", "tcp://127.0.0.1:7400", true, 0, List.of(nic), List.of());
        return new DashboardSnapshot(timeMillis, "push", List.of(engine), List.of());
    }
}
