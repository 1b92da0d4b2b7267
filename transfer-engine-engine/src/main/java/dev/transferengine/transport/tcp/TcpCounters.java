package dev.transferengine.transport.tcp;

import dev.transferengine.TransportEvent;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link TcpCounter}s of one NIC. Counted on the worker, readable from any thread. Logging is rate limited per
 * counter, so a flood of bad connections costs one WARN line per interval, which says how many it stands for.
 */
@SuppressWarnings("EnumOrdinal") // flat tables indexed by counter ordinal: no EnumMap or boxing on the worker
final class TcpCounters {

    /** At most one line per counter this often. */
    static final long LOG_INTERVAL_NANOS = 10_000_000_000L;

    private static final Logger LOG = LoggerFactory.getLogger(TcpCounters.class);
    private static final TcpCounter[] ALL = TcpCounter.values();

    private final String description;
    private final LongSupplier nanoClock;
    private final AtomicLongArray counts = new AtomicLongArray(ALL.length);
    private final long[] loggedAt = new long[ALL.length];
    private final long[] unlogged = new long[ALL.length];
    private final boolean[] everLogged = new boolean[ALL.length];

    TcpCounters(final String description, final LongSupplier nanoClock) {
        this.description = description;
        this.nanoClock = nanoClock;
    }

    /** Counts one event; logs {@code what} about {@code remote} unless this counter logged recently. */
    void count(final TcpCounter counter, final String remote, final String what) {
        final int i = counter.ordinal();
        counts.incrementAndGet(i);
        if (!counter.warns()) {
            LOG.debug("{}: {} {}: {}", description, counter, remote, what);
            return;
        }
        final long now = nanoClock.getAsLong();
        if (everLogged[i] && now - loggedAt[i] < LOG_INTERVAL_NANOS) {
            unlogged[i]++;
            return;
        }
        LOG.warn(
                "{}: {} {}: {}{}",
                description,
                counter,
                remote,
                what,
                unlogged[i] == 0 ? "" : " (and " + unlogged[i] + " more since the last line)");
        everLogged[i] = true;
        loggedAt[i] = now;
        unlogged[i] = 0;
    }

    /** Counts one event without logging it (the caller logs). */
    void count(final TcpCounter counter) {
        counts.incrementAndGet(counter.ordinal());
    }

    /** Any thread. */
    long get(final TcpCounter counter) {
        return counts.get(counter.ordinal());
    }

    /** Every counter as a transport-neutral event; any thread. */
    List<TransportEvent> events() {
        final ArrayList<TransportEvent> events = new ArrayList<>(ALL.length);
        for (final TcpCounter counter : ALL) {
            events.add(new TransportEvent(
                    counter.category(), counter.reason(), counter.description(), counts.get(counter.ordinal())));
        }
        return events;
    }

    /** Every counter by name; any thread. */
    Map<String, Long> snapshot() {
        final LinkedHashMap<String, Long> named = new LinkedHashMap<>();
        for (final TcpCounter counter : ALL) {
            named.put(counter.name(), counts.get(counter.ordinal()));
        }
        return named;
    }
}
