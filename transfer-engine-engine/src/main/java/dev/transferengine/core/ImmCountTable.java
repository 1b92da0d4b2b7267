package dev.transferengine.core;

import dev.transferengine.EngineCounter;
import dev.transferengine.ImmCountListener;
import dev.transferengine.ImmCountState;
import dev.transferengine.ImmListener;
import dev.transferengine.exceptions.ImmAbandonedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.spi.DomainListener;

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
 * Imms with no entry go to the imm listener when one is set. At most {@code maxCredited} distinct values are
 * credited or reserved at once, so a peer sending ever new values cannot exhaust memory: a domain
 * {@link #reserve}s before placing a write with an imm and refuses it beyond the bound (counted), then
 * {@link #consume}s or {@link #release}s the reservation. One lock guards the table: it is held for a few field
 * updates, never while user code runs.
 *
 * <p>A negative acknowledgement ({@link #onAbandoned}) ends the imm's expectation (its listener's
 * {@link ImmCountListener#onAbandoned} runs, the credits stay) or the polled counter's next short waiter; one that
 * comes before anyone expects the imm is kept with its credits for the next expectation or counter.
 */
final class ImmCountTable {

    private static final class Entry {
        final int imm;
        final int expected;
        final @Nullable ImmCountListener listener;
        final @Nullable PolledImmCounter polled;
        long count;
        boolean firing;
        /** Credits only: a negative acknowledgement that came before anyone expected the imm. */
        @Nullable ImmAbandonedException abandoned;

        Entry(
                final int imm,
                final int expected,
                final @Nullable ImmCountListener listener,
                final @Nullable PolledImmCounter polled,
                final long count) {
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

        /** Credits only: imms nobody expected yet. */
        boolean creditsOnly() {
            return listener == null && polled == null;
        }
    }

    /** The bit of a reservation that holds a place against the bound. */
    static final long HOLDS_PLACE = 1L << 32;

    private static final long IMM_BITS = 0xFFFF_FFFFL;

    private final Int2ObjectHashMap<Entry> entries = new Int2ObjectHashMap<>();
    private final CallbackDispatcher callbacks;
    private final Counters counters;
    private final int maxCredited;
    private volatile @Nullable ImmListener immListener;
    /** Entries that only hold credits. */
    private int credited;
    /** Reservations that hold a place against {@link #maxCredited}, not yet consumed or released. */
    private int reserved;

    ImmCountTable(final CallbackDispatcher callbacks, final Counters counters, final int maxCredited) {
        this.callbacks = callbacks;
        this.counters = counters;
        this.maxCredited = maxCredited;
    }

    /**
     * Worker thread: reserves the credit of one incoming {@code imm}, see
     * {@link dev.transferengine.spi.DomainListener#reserveImm}. A value nobody expects (no entry, no imm listener)
     * takes one of the {@code maxCredited} places until the reservation is consumed or released.
     *
     * @return the reservation: the imm in the low 32 bits, {@link #HOLDS_PLACE} when it holds a place; or
     *     {@link dev.transferengine.spi.DomainListener#IMM_REFUSED}, counted
     */
    long reserve(final int imm) {
        final long reservation = imm & IMM_BITS;
        synchronized (this) {
            if (immListener != null || entries.containsKey(imm)) {
                return reservation;
            }
            if (credited + reserved < maxCredited) {
                reserved++;
                return reservation | HOLDS_PLACE;
            }
        }
        counters.increment(EngineCounter.IMMS_REFUSED);
        return DomainListener.IMM_REFUSED;
    }

    /** Worker thread: the write of {@code reservation} landed; its imm is credited, past the bound if need be. */
    void consume(final long reservation) {
        final int imm = (int) reservation;
        counters.increment(EngineCounter.IMM_EVENTS);
        synchronized (this) {
            if ((reservation & HOLDS_PLACE) != 0) {
                reserved--;
            }
            final Entry entry = entries.get(imm);
            if (entry == null) {
                final ImmListener listener = immListener;
                if (listener != null) {
                    callbacks.dispatchImm(listener, imm);
                } else {
                    put(new Entry(imm, 0, null, null, 1)); // reserved, so within the bound
                }
            } else if (entry.polled != null) {
                entry.polled.credit();
            } else {
                entry.count++;
                fireIfDue(entry);
            }
        }
    }

    /** Worker thread: the write of {@code reservation} will never land; its place is free again. */
    void release(final long reservation) {
        if ((reservation & HOLDS_PLACE) != 0) {
            synchronized (this) {
                reserved--;
            }
        }
    }

    synchronized @Nullable ImmCountState expect(final int imm, final int count, final ImmCountListener listener) {
        if (count < 1) {
            throw new InvalidRequestException("expected imm count must be >= 1, was " + count);
        }
        final Entry old = entries.get(imm);
        final ImmAbandonedException abandonment = old == null ? null : old.abandoned;
        if (abandonment != null) {
            old.abandoned = null; // taken by this expectation, which ends at once; the credits stay
            callbacks.dispatch(() -> listener.onAbandoned(abandonment));
            return null;
        }
        final Entry entry = new Entry(imm, count, listener, null, old == null ? 0 : old.credits());
        put(entry);
        fireIfDue(entry);
        return detach(old);
    }

    synchronized @Nullable ImmCountState remove(final int imm) {
        return detach(forget(imm));
    }

    synchronized PolledImmCounter counter(final int imm) {
        final Entry old = entries.get(imm);
        if (old != null && old.polled != null) {
            return old.polled;
        }
        final PolledImmCounter counter = new PolledImmCounter(imm, old == null ? 0 : old.credits());
        if (old != null && old.abandoned != null) {
            counter.abandon(old.abandoned);
        }
        put(new Entry(imm, 0, null, counter, 0));
        return counter;
    }

    /**
     * Worker thread: a sender abandoned an operation carrying {@code abandonment.imm()}. Ends the expectation of that
     * imm (its credits stay credited) or the polled counter's short waiter, or keeps the abandonment for the next
     * one; with neither and an imm listener set, there is nobody to tell.
     */
    void onAbandoned(final ImmAbandonedException abandonment) {
        counters.increment(EngineCounter.IMMS_ABANDONED);
        final int imm = abandonment.imm();
        synchronized (this) {
            final Entry entry = entries.get(imm);
            if (entry == null) {
                if (immListener == null && credited + reserved < maxCredited) {
                    final Entry kept = new Entry(imm, 0, null, null, 0);
                    kept.abandoned = abandonment;
                    put(kept);
                }
            } else if (entry.polled != null) {
                entry.polled.abandon(abandonment);
            } else if (entry.listener != null) {
                forget(imm);
                if (entry.count > 0) {
                    put(new Entry(imm, 0, null, null, entry.count)); // claimed imms, so past the bound too
                }
                final ImmCountListener listener = entry.listener;
                callbacks.dispatch(() -> listener.onAbandoned(abandonment));
            } else {
                entry.abandoned = abandonment;
            }
        }
    }

    void immListener(final @Nullable ImmListener listener) {
        this.immListener = listener;
    }

    /** Lock held: adds or replaces the entry of its imm, keeping {@link #credited} exact. */
    private void put(final Entry entry) {
        final Entry old = entries.put(entry.imm, entry);
        if (old != null && old.creditsOnly()) {
            credited--;
        }
        if (entry.creditsOnly()) {
            credited++;
        }
    }

    /** Lock held: removes the entry of {@code imm}, keeping {@link #credited} exact. */
    private @Nullable Entry forget(final int imm) {
        final Entry old = entries.remove(imm);
        if (old != null && old.creditsOnly()) {
            credited--;
        }
        return old;
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
            forget(entry.imm);
            surplus = entry.count;
            listener = immListener;
            if (listener == null && surplus > 0) {
                put(new Entry(entry.imm, 0, null, null, surplus)); // claimed imms, so past the bound too
            }
        }
        if (listener != null) {
            for (long i = 0; i < surplus; i++) {
                listener.onImm(entry.imm);
            }
        }
    }
}
