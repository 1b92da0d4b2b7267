package dev.transferengine.core;

import dev.transferengine.EngineCounter;
import dev.transferengine.ImmCountListener;
import dev.transferengine.ImmCountState;
import dev.transferengine.ImmListener;
import dev.transferengine.InvalidRequestException;

import java.util.Objects;

import org.agrona.collections.Int2ObjectHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Receiver-side imm counting, shared by every worker of an engine. Each imm value has at most one entry:
 * <ul>
 *   <li>an expectation ({@code expected > 0}): fires when its count reaches {@code expected}, subtracts it, and
 *       stays quiet until the listener decided to re-arm (fire again if enough arrived meanwhile) or to remove it
 *       (the surplus is then replayed to the imm listener, or credited);</li>
 *   <li>a polled counter: credits go straight to it;</li>
 *   <li>credits: imms that arrived before anyone expected them and with no imm listener set, kept until claimed.</li>
 * </ul>
 * Imms with no entry go to the imm listener when one is set. One lock guards the table: it is held for a few
 * field updates, never while user code runs.
 */
final class ImmCountTable {

    private static final class Entry {
        final int imm;
        final int expected;
        final @Nullable ImmCountListener listener;
        final @Nullable PolledImmCounter polled;
        long count;
        boolean firing;

        Entry(final int imm, final int expected, final @Nullable ImmCountListener listener,
              final @Nullable PolledImmCounter polled, final long count) {
            this.imm = imm;
            this.expected = expected;
            this.listener = listener;
            this.polled = polled;
            this.count = count;
        }

        long credits() {
            return polled != null ? Math.max(0, polled.balance()) : count;
        }

        ImmCountState state() {
            return new ImmCountState(credits(), expected);
        }
    }

    private final Int2ObjectHashMap<Entry> entries = new Int2ObjectHashMap<>();
    private final CallbackDispatcher callbacks;
    private final Counters counters;
    private volatile @Nullable ImmListener immListener;

    ImmCountTable(final CallbackDispatcher callbacks, final Counters counters) {
        this.callbacks = callbacks;
        this.counters = counters;
    }

    /** Worker thread: one imm arrived. */
    void onImm(final int imm) {
        counters.increment(EngineCounter.IMM_EVENTS);
        synchronized (this) {
            final Entry entry = entries.get(imm);
            if (entry == null) {
                final ImmListener listener = immListener;
                if (listener != null) {
                    callbacks.dispatch(() -> listener.onImm(imm));
                } else {
                    entries.put(imm, new Entry(imm, 0, null, null, 1));
                }
            } else if (entry.polled != null) {
                entry.polled.credit();
            } else {
                entry.count++;
                fireIfDue(entry);
            }
        }
    }

    synchronized @Nullable ImmCountState expect(final int imm, final int count, final ImmCountListener listener) {
        if (count < 1) {
            throw new InvalidRequestException("expected imm count must be >= 1, was " + count);
        }
        final Entry old = entries.get(imm);
        final Entry entry = new Entry(imm, count, listener, null, old == null ? 0 : old.credits());
        entries.put(imm, entry);
        fireIfDue(entry);
        return detach(old);
    }

    synchronized @Nullable ImmCountState remove(final int imm) {
        return detach(entries.remove(imm));
    }

    synchronized PolledImmCounter counter(final int imm) {
        final Entry old = entries.get(imm);
        if (old != null && old.polled != null) {
            return old.polled;
        }
        final PolledImmCounter counter = new PolledImmCounter(imm, old == null ? 0 : old.credits());
        entries.put(imm, new Entry(imm, 0, null, counter, 0));
        return counter;
    }

    void immListener(final @Nullable ImmListener listener) {
        this.immListener = listener;
    }

    private @Nullable ImmCountState detach(final @Nullable Entry old) {
        if (old == null) {
            return null;
        }
        if (old.polled != null) {
            old.polled.detach();
        }
        return old.state();
    }

    private void fireIfDue(final Entry entry) {
        if (entry.listener != null && !entry.firing && entry.count >= entry.expected) {
            entry.count -= entry.expected;
            entry.firing = true;
            callbacks.dispatch(() -> reached(entry));
        }
    }

    /** Callback thread: runs the listener, then re-arms or removes the expectation. */
    private void reached(final Entry entry) {
        boolean keep = false;
        try {
            keep = Objects.requireNonNull(entry.listener).onReached(entry.imm);
        } finally {
            afterReached(entry, keep);
        }
    }

    private void afterReached(final Entry entry, final boolean keep) {
        final long surplus;
        final ImmListener listener;
        synchronized (this) {
            if (entries.get(entry.imm) != entry) {
                return; // replaced or removed while the listener ran
            }
            if (keep) {
                entry.firing = false;
                fireIfDue(entry);
                return;
            }
            entries.remove(entry.imm);
            surplus = entry.count;
            listener = immListener;
            if (listener == null && surplus > 0) {
                entries.put(entry.imm, new Entry(entry.imm, 0, null, null, surplus));
            }
        }
        if (listener != null) {
            for (long i = 0; i < surplus; i++) {
                listener.onImm(entry.imm);
            }
        }
    }
}
