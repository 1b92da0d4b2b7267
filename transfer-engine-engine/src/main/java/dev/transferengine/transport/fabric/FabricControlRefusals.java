package dev.transferengine.transport.fabric;

import dev.transferengine.TransportEvent;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Control messages ({@link FabricControl}) that a domain dropped or did not send, counted per reason and published as
 * transport events (category {@code control.refused}). Anyone who reaches a fabric endpoint can send control
 * messages, so each reason logs at most one WARN line per {@link #LOG_INTERVAL_NANOS}, which says how many it stands
 * for. Counted on the worker, readable from any thread.
 */
@SuppressWarnings("EnumOrdinal") // flat tables indexed by reason ordinal: no EnumMap or boxing on the worker
final class FabricControlRefusals {

    /** At most one line per reason this often. */
    static final long LOG_INTERVAL_NANOS = 10_000_000_000L;

    private static final Logger LOG = LoggerFactory.getLogger(FabricControlRefusals.class);
    private static final String CATEGORY = "control.refused";

    /** Why a control message was dropped or not sent. Reasons are stable: metrics publish them. */
    enum Reason {
        MALFORMED("malformed", "control messages dropped: not one of ours, cut short, too long or with a bad field"),
        UNPROVEN(
                "unproven",
                "negative acknowledgements dropped: they name no region key of this NIC (a sender without a"
                        + " descriptor, or an engine before keyed acknowledgements)"),
        UNASKED(
                "unasked",
                "pool-size answers dropped: they do not echo the nonce of this domain's question to that peer"
                        + " (forged, or from an engine before echoed nonces)"),
        OVERFLOW(
                "overflow",
                "control answers not sent or peers not subscribed: as many as the bound were in flight already");

        private final String reason;
        private final String description;

        Reason(final String reason, final String description) {
            this.reason = reason;
            this.description = description;
        }
    }

    private static final Reason[] ALL = Reason.values();

    private final String description;
    private final AtomicLongArray counts = new AtomicLongArray(ALL.length);
    private final long[] loggedAt = new long[ALL.length];
    private final long[] unlogged = new long[ALL.length];
    private final boolean[] everLogged = new boolean[ALL.length];

    FabricControlRefusals(final String description) {
        this.description = description;
    }

    /** Counts one refusal; logs {@code why} unless this reason logged within the interval. Worker thread. */
    void refuse(final Reason reason, final String why) {
        final int i = reason.ordinal();
        counts.incrementAndGet(i);
        final long now = System.nanoTime();
        if (everLogged[i] && now - loggedAt[i] < LOG_INTERVAL_NANOS) {
            unlogged[i]++;
            return;
        }
        LOG.warn(
                "{}: control message refused ({}): {}{}",
                description,
                reason.reason,
                why,
                unlogged[i] == 0 ? "" : " (and " + unlogged[i] + " more since the last line)");
        everLogged[i] = true;
        loggedAt[i] = now;
        unlogged[i] = 0;
    }

    /** Any thread. */
    long count(final Reason reason) {
        return counts.get(reason.ordinal());
    }

    /** Every reason as a transport event, always in the same order; any thread. */
    List<TransportEvent> events() {
        final List<TransportEvent> events = new ArrayList<>(ALL.length);
        for (final Reason reason : ALL) {
            events.add(new TransportEvent(CATEGORY, reason.reason, reason.description, counts.get(reason.ordinal())));
        }
        return events;
    }
}
