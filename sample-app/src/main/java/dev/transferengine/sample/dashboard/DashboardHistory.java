package dev.transferengine.sample.dashboard;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The last {@code history} of snapshots, shared by every viewer, so that a page opened now starts with a minute of
 * charts. Each snapshot gets its NICs' rates averaged over {@code rateWindow}: the demo moves a burst once a second,
 * and a rate between two snapshots half a second apart zig-zags between nothing and twice the mean.
 */
final class DashboardHistory {

    private final long rateWindowMillis;
    private final long historyMillis;
    private final ArrayDeque<DashboardSnapshot> snapshots = new ArrayDeque<>();

    /**
     * @param rateWindow the span rates are averaged over
     * @param history    how long snapshots are kept, at least {@code rateWindow}
     */
    DashboardHistory(final Duration rateWindow, final Duration history) {
        if (history.compareTo(rateWindow) < 0 || rateWindow.isNegative() || rateWindow.isZero()) {
            throw new IllegalArgumentException(
                    "need 0 < rate window <= history, got " + rateWindow + " and " + history);
        }
        this.rateWindowMillis = rateWindow.toMillis();
        this.historyMillis = history.toMillis();
    }

    /**
     * Adds a snapshot of totals, with the rates since the oldest kept snapshot inside the rate window (none for the
     * first), and forgets what is older than the history. A snapshot not later than the last one is refused.
     *
     * @param totals a snapshot without rates
     * @return the same snapshot with rates, as kept
     * @throws IllegalArgumentException if it is not later than the last one
     */
    synchronized DashboardSnapshot add(final DashboardSnapshot totals) {
        final long now = totals.timeMillis();
        final DashboardSnapshot last = snapshots.peekLast();
        if (last != null && now <= last.timeMillis()) {
            throw new IllegalArgumentException(
                    "snapshot at " + now + " ms is not later than the last one at " + last.timeMillis() + " ms");
        }
        final DashboardSnapshot base = base(now);
        final DashboardSnapshot rated = base == null ? totals : withRates(totals, base);
        snapshots.addLast(rated);
        while (snapshots.getFirst().timeMillis() < now - historyMillis) {
            snapshots.removeFirst();
        }
        return rated;
    }

    /**
     * What is kept, oldest first.
     *
     * @return a copy
     */
    synchronized List<DashboardSnapshot> snapshots() {
        return new ArrayList<>(snapshots);
    }

    /**
     * The newest snapshot.
     *
     * @return it, or null before the first
     */
    synchronized @Nullable DashboardSnapshot latest() {
        return snapshots.peekLast();
    }

    /** The oldest kept snapshot no older than the rate window before {@code now}. */
    private @Nullable DashboardSnapshot base(final long now) {
        for (final DashboardSnapshot snapshot : snapshots) {
            if (snapshot.timeMillis() >= now - rateWindowMillis) {
                return snapshot;
            }
        }
        return null;
    }

    private static DashboardSnapshot withRates(final DashboardSnapshot totals, final DashboardSnapshot base) {
        final double seconds = (totals.timeMillis() - base.timeMillis()) / 1000.0;
        final Map<String, DashboardSnapshot.Nic> before = new HashMap<>();
        for (final DashboardSnapshot.Engine engine : base.engines()) {
            for (final DashboardSnapshot.Nic nic : engine.nics()) {
                before.put(engine.name() + "/" + nic.nic(), nic);
            }
        }
        final List<DashboardSnapshot.Engine> engines = totals.engines().stream()
                .map(engine -> engine.withNics(engine.nics().stream()
                        .map(nic -> {
                            final DashboardSnapshot.Nic old = before.get(engine.name() + "/" + nic.nic());
                            return old == null
                                    ? nic
                                    : nic.withRates(new DashboardSnapshot.Rates(
                                            rate(nic.bytesOut(), old.bytesOut(), seconds),
                                            rate(nic.bytesIn(), old.bytesIn(), seconds),
                                            rate(nic.imms(), old.imms(), seconds),
                                            totals.timeMillis() - base.timeMillis()));
                        })
                        .toList()))
                .toList();
        return new DashboardSnapshot(totals.timeMillis(), totals.kvMode(), engines, totals.latencies());
    }

    /** Per second; a counter that went back (a group restarted its NICs' counts) gives 0, not a negative rate. */
    private static double rate(final long now, final long before, final double seconds) {
        return Math.max(0, now - before) / seconds;
    }
}
