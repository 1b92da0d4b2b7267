package dev.transferengine.core;

import dev.transferengine.EngineCounter;
import dev.transferengine.ImmCountListener;
import dev.transferengine.ImmCountState;
import dev.transferengine.ImmListener;
import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.ImmAbandonedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.spi.DomainListener;

import java.util.Iterator;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

import org.agrona.collections.Int2ObjectHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Receiver-side imm counting, shared by every worker of an engine. Each imm value has at most one entry:
 * <ul>
 *   <li>an expectation ({@code expected > 0}): fires when its count reaches {@code expected}, subtracts it, and
 *       stays quiet until the listener decided to re-arm (fire again if enough arrived meanwhile) or to remove it
 *       (the surplus is then replayed to the imm listener, or credited);</li>
 *   <li>a polled counter: credits go straight to it;</li>
 *   <li>a trigger ({@link ImmTriggers.Armed}): fires on the counting thread once per {@code expected} imms, each
 *       firing one submission of its request, with no callback; it stays armed until replaced, removed or closed;</li>
 *   <li>credits: imms that arrived before anyone expected them and with no imm listener set, kept until claimed or
 *       until they expire ({@link #tick}).</li>
 * </ul>
 * Imms with no entry go to the imm listener when one is set. At most {@code maxCredited} distinct values are
 * credited or reserved at once, each peer a fair share of them ({@link ImmShares}), so a peer sending ever new
 * values cannot exhaust memory nor starve the others: a domain {@link #reserve}s before placing a write with an imm
 * and refuses it beyond the bound (counted), then {@link #consume}s or {@link #release}s the reservation. Credits
 * nobody claims within the time to live are dropped (counted), and their places are free again.
 *
 * <p>The entries are spread over {@link #STRIPES} stripes by imm value, each its own monitor, so the workers of
 * different NICs and the API threads rarely meet: an imm takes its stripe's lock to be reserved and to be consumed,
 * and the fair shares' lock only when nobody expects it. No lock is held while user code runs, and firing an
 * expectation allocates nothing (the entry is the callback). A trigger fires under its stripe's lock: it only queues
 * a pooled submission, never runs user code, never blocks.
 *
 * <p>A negative acknowledgement ({@link #onAbandoned}) ends the imm's expectation (its listener's
 * {@link ImmCountListener#onAbandoned} runs, the credits stay) or the polled counter's next short waiter; one that
 * comes before anyone expects the imm is kept with its credits for the next expectation or counter. A trigger
 * stays armed through one: it has no listener to end, and counts on with the imms that do land.
 */
final class ImmCountTable {

    private static final int STRIPE_BITS = 6;

    /** How many stripes the entries are spread over. */
    static final int STRIPES = 1 << STRIPE_BITS;

    /** A reservation's bits above the imm: the id of the share holding its place, plus one; zero for none. */
    private static final int SHARE_SHIFT = 32;

    private static final long IMM_BITS = 0xFFFF_FFFFL;

    /** A reservation's mark: it stands for several imms of one frame and holds one place for them all. */
    private static final long BATCH = 1L << 62;

    /** How often the time to live is checked, as a fraction of it: credits expire at most 1/8 of it late. */
    private static final int SWEEPS_PER_TTL = 8;

    /** One imm value's entry; the callback that runs its listener when it fires. */
    private final class Entry implements Runnable {
        final int imm;
        final int expected;
        final @Nullable ImmCountListener listener;
        final @Nullable PolledImmCounter polled;
        final ImmTriggers.@Nullable Armed trigger;
        long count;
        boolean firing;
        /** Credits only: a negative acknowledgement that came before anyone expected the imm. */
        @Nullable ImmAbandonedException abandoned;
        /** Credits only: the share holding this value's place, or -1 when it was credited past the bound. */
        int share = ImmShares.REFUSED;
        /** Credits only: when they were first credited (the table's coarse clock), for {@link #expire}. */
        long since;

        Entry(
                final int imm,
                final int expected,
                final @Nullable ImmCountListener listener,
                final @Nullable PolledImmCounter polled,
                final ImmTriggers.@Nullable Armed trigger,
                final long count) {
            this.imm = imm;
            this.expected = expected;
            this.listener = listener;
            this.polled = polled;
            this.trigger = trigger;
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
            return listener == null && polled == null && trigger == null;
        }

        /** Callback thread: the expectation fired. */
        @Override
        public void run() {
            reached(this);
        }
    }

    /** The entries of the imm values that map to it; its monitor guards them. */
    private static final class Stripe {
        final Int2ObjectHashMap<Entry> entries = new Int2ObjectHashMap<>();
    }

    private final Stripe[] stripes = new Stripe[STRIPES];
    private final ImmShares shares;
    private final CallbackDispatcher callbacks;
    private final Counters counters;
    private final long ttlNanos;
    private final long sweepNanos;
    private final AtomicLong nextSweep;
    /** The engine's clock as the last sweep read it: when credits count as credited. */
    private volatile long coarseNow;

    private volatile @Nullable ImmListener immListener;

    /**
     * @param maxCredited distinct unexpected values credited or reserved at once
     * @param ttlNanos how long credits nobody claims are kept, positive
     * @param startNanos the engine's clock now; the first sweep is due then
     */
    ImmCountTable(
            final CallbackDispatcher callbacks,
            final Counters counters,
            final int maxCredited,
            final long ttlNanos,
            final long startNanos) {
        this.callbacks = callbacks;
        this.counters = counters;
        this.shares = new ImmShares(maxCredited);
        this.ttlNanos = ttlNanos;
        this.sweepNanos = Math.max(1, ttlNanos / SWEEPS_PER_TTL);
        this.nextSweep = new AtomicLong(startNanos);
        this.coarseNow = startNanos;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Stripe();
        }
    }

    private Stripe stripe(final int imm) {
        // Fibonacci hashing: the top bits of the product, so that neighbouring values land on different stripes
        return stripes[((imm ^ (imm >>> 16)) * 0x9E3779B9) >>> (Integer.SIZE - STRIPE_BITS)];
    }

    /**
     * Worker thread: reserves the credit of one incoming {@code imm} from {@code peer}, see
     * {@link DomainListener#reserveImm}. A value nobody expects (no entry, no imm listener) takes one of the peer's
     * places until the reservation is consumed or released.
     *
     * @return the reservation: the imm in the low 32 bits, above it the share holding its place; or
     *     {@link DomainListener#IMM_REFUSED}, counted
     */
    long reserve(final @Nullable NetworkAddress peer, final int imm) {
        return reserve(peer, imm, 1);
    }

    /**
     * Worker thread: reserves the credits of {@code count} incoming imms {@code imm} of one frame from {@code peer},
     * see {@link DomainListener#reserveImms}: one lock and at most one place for all of them, as the credits-only
     * entry they may make holds one place; more than one imm is marked {@link #BATCH}, so that consuming or releasing
     * it gives that one place back, not {@code count}.
     *
     * @return the reservation; or {@link DomainListener#IMM_REFUSED}, counted {@code count} times
     */
    long reserve(final @Nullable NetworkAddress peer, final int imm, final int count) {
        final long reservation = imm & IMM_BITS;
        if (immListener != null) {
            return reservation;
        }
        final Stripe stripe = stripe(imm);
        synchronized (stripe) {
            if (immListener != null || stripe.entries.containsKey(imm)) {
                return reservation;
            }
            final int share = shares.take(peer);
            if (share != ImmShares.REFUSED) {
                return reservation | ((share + 1L) << SHARE_SHIFT) | (count > 1 ? BATCH : 0);
            }
        }
        counters.add(EngineCounter.IMMS_REFUSED, count);
        return DomainListener.IMM_REFUSED;
    }

    /** How many places {@code reservation}, standing for {@code count} equal ones, holds beside the first. */
    private static int morePlaces(final long reservation, final int count) {
        return (reservation & BATCH) != 0 ? 0 : count - 1;
    }

    /** The share holding the place of {@code reservation}, or {@link ImmShares#REFUSED} for none. */
    private static int shareOf(final long reservation) {
        return (int) ((reservation & ~BATCH) >>> SHARE_SHIFT) - 1;
    }

    /**
     * Worker thread: the writes of {@code count} equal reservations (or of one {@link #BATCH} reservation for
     * {@code count}) landed; their imms are credited, past the bound if need be. Each held place is given back, but
     * one credits-only entry takes one for all of them.
     */
    void consume(final long reservation, final int count) {
        final int imm = (int) reservation;
        final int share = shareOf(reservation);
        final int places = 1 + morePlaces(reservation, count);
        counters.add(EngineCounter.IMM_EVENTS, count);
        final Stripe stripe = stripe(imm);
        synchronized (stripe) {
            final Entry entry = stripe.entries.get(imm);
            if (entry == null) {
                final ImmListener listener = immListener;
                if (listener != null) {
                    giveBack(share, places);
                    for (int i = 0; i < count; i++) {
                        callbacks.dispatchImm(listener, imm);
                    }
                } else {
                    credit(stripe, imm, count, share); // a place reserved, or none: past the bound
                    giveBack(share, places - 1); // the entry holds one place for all of them
                }
                return;
            }
            giveBack(share, places); // the value has an entry now, which needs no place
            if (entry.polled != null) {
                entry.polled.credit(count);
            } else {
                entry.count += count;
                fireIfDue(entry);
                fireTrigger(entry);
            }
        }
    }

    /** Worker thread: the write of {@code reservation} will never land; its place is free again. */
    void release(final long reservation) {
        giveBack(shareOf(reservation));
    }

    /** Worker thread: the writes of {@code count} equal reservations (or of one batch) will never land. */
    void release(final long reservation, final int count) {
        giveBack(shareOf(reservation), 1 + morePlaces(reservation, count));
    }

    @Nullable ImmCountState expect(final int imm, final int count, final ImmCountListener listener) {
        if (count < 1) {
            throw new InvalidRequestException("expected imm count must be >= 1, was " + count);
        }
        final Stripe stripe = stripe(imm);
        synchronized (stripe) {
            final Entry old = stripe.entries.get(imm);
            final ImmAbandonedException abandonment = old == null ? null : old.abandoned;
            if (abandonment != null) {
                old.abandoned = null; // taken by this expectation, which ends at once; the credits stay
                callbacks.dispatch(() -> listener.onAbandoned(abandonment));
                return null;
            }
            final Entry entry = new Entry(imm, count, listener, null, null, old == null ? 0 : old.credits());
            put(stripe, entry);
            fireIfDue(entry);
            return detach(old);
        }
    }

    @Nullable ImmCountState remove(final int imm) {
        final Stripe stripe = stripe(imm);
        synchronized (stripe) {
            return detach(forget(stripe, imm));
        }
    }

    /**
     * Arms {@code trigger} as its imm's entry, replacing any other with its credits (an abandonment kept with them is
     * dropped: a trigger has nobody to tell); credits already there fire it at once, on this thread.
     */
    void trigger(final ImmTriggers.Armed trigger) {
        final int imm = trigger.imm();
        final Stripe stripe = stripe(imm);
        synchronized (stripe) {
            final Entry old = stripe.entries.get(imm);
            final Entry entry = new Entry(imm, trigger.count(), null, null, trigger, old == null ? 0 : old.credits());
            put(stripe, entry);
            fireTrigger(entry);
            detach(old);
        }
    }

    /**
     * Disarms {@code trigger} if it is still its imm's entry; imms it counted toward its next firing go to the imm
     * listener, or stay credited (past the bound, as they were claimed). Any thread.
     */
    void disarm(final ImmTriggers.Armed trigger) {
        final int imm = trigger.imm();
        final ImmListener listener;
        final long surplus;
        final Stripe stripe = stripe(imm);
        synchronized (stripe) {
            final Entry entry = stripe.entries.get(imm);
            if (entry == null || entry.trigger != trigger) {
                return;
            }
            forget(stripe, imm);
            surplus = entry.count;
            listener = immListener;
            if (listener == null && surplus > 0) {
                credit(stripe, imm, surplus, ImmShares.REFUSED);
            }
        }
        for (long i = 0; listener != null && i < surplus; i++) {
            callbacks.dispatchImm(listener, imm);
        }
    }

    PolledImmCounter counter(final int imm) {
        final Stripe stripe = stripe(imm);
        synchronized (stripe) {
            final Entry old = stripe.entries.get(imm);
            if (old != null && old.polled != null) {
                return old.polled;
            }
            final PolledImmCounter counter = new PolledImmCounter(imm, old == null ? 0 : old.credits());
            if (old != null && old.abandoned != null) {
                counter.abandon(old.abandoned);
            }
            put(stripe, new Entry(imm, 0, null, counter, null, 0));
            return counter;
        }
    }

    /**
     * Worker thread: a sender abandoned an operation carrying {@code abandonment.imm()}. Ends the expectation of that
     * imm (its credits stay credited) or the polled counter's short waiter, or keeps the abandonment for the next
     * one, on a place of the sending peer's share; with neither and an imm listener set, there is nobody to tell.
     */
    void onAbandoned(final ImmAbandonedException abandonment) {
        counters.increment(EngineCounter.IMMS_ABANDONED);
        final int imm = abandonment.imm();
        final Stripe stripe = stripe(imm);
        synchronized (stripe) {
            final Entry entry = stripe.entries.get(imm);
            if (entry == null) {
                final int share = immListener == null ? shares.take(abandonment.peer()) : ImmShares.REFUSED;
                if (share != ImmShares.REFUSED) {
                    credit(stripe, imm, 0, share).abandoned = abandonment;
                }
            } else if (entry.polled != null) {
                entry.polled.abandon(abandonment);
            } else if (entry.trigger != null) {
                return; // counted above; the trigger stays armed and counts the imms that do land
            } else if (entry.listener != null) {
                forget(stripe, imm);
                if (entry.count > 0) {
                    credit(stripe, imm, entry.count, ImmShares.REFUSED); // claimed imms, so past the bound too
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

    /**
     * Worker thread, once per duty cycle with the clock it read: about every eighth of the time to live, one worker
     * drops the credits nobody claimed within it (counted as {@link EngineCounter#IMMS_EXPIRED}); the others return
     * at once.
     *
     * @return how many imm values expired
     */
    int tick(final long now) {
        final long due = nextSweep.get();
        if (now - due < 0 || !nextSweep.compareAndSet(due, now + sweepNanos)) {
            return 0;
        }
        coarseNow = now;
        return expire(now);
    }

    /** Drops the credits first credited {@link #ttlNanos} or more before {@code now}; a sweep, so it may iterate. */
    private int expire(final long now) {
        int values = 0;
        long imms = 0;
        for (final Stripe stripe : stripes) {
            synchronized (stripe) {
                for (final Iterator<Entry> it = stripe.entries.values().iterator(); it.hasNext(); ) {
                    final Entry entry = it.next();
                    if (entry.creditsOnly() && now - entry.since >= ttlNanos) {
                        it.remove();
                        giveBack(entry.share);
                        imms += entry.count;
                        values++;
                    }
                }
            }
        }
        if (imms > 0) {
            counters.add(EngineCounter.IMMS_EXPIRED, imms);
        }
        shares.prune();
        return values;
    }

    /** Places held by reservations and credits, over all peers; for tests. */
    int placesHeld() {
        return shares.held();
    }

    /** Stripe locked: credits {@code count} imms to a new credits-only entry on the place of {@code share}. */
    private Entry credit(final Stripe stripe, final int imm, final long count, final int share) {
        final Entry entry = new Entry(imm, 0, null, null, null, count);
        entry.share = share;
        entry.since = coarseNow;
        put(stripe, entry);
        return entry;
    }

    private void giveBack(final int share) {
        if (share != ImmShares.REFUSED) {
            shares.give(share);
        }
    }

    private void giveBack(final int share, final int places) {
        for (int i = 0; i < places; i++) {
            giveBack(share);
        }
    }

    /** Stripe locked: adds or replaces the entry of its imm; a replaced credits-only entry gives its place back. */
    private void put(final Stripe stripe, final Entry entry) {
        final Entry old = stripe.entries.put(entry.imm, entry);
        if (old != null) {
            giveBack(old.share);
        }
    }

    /** Stripe locked: removes the entry of {@code imm}; a credits-only entry gives its place back. */
    private @Nullable Entry forget(final Stripe stripe, final int imm) {
        final Entry old = stripe.entries.remove(imm);
        if (old != null) {
            giveBack(old.share);
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

    /** Stripe locked. */
    private void fireIfDue(final Entry entry) {
        if (entry.listener != null && !entry.firing && entry.count >= entry.expected) {
            entry.count -= entry.expected;
            entry.firing = true;
            callbacks.dispatch(entry);
        }
    }

    /** Stripe locked: a trigger fires once for every {@code expected} imms counted, on this thread. */
    private static void fireTrigger(final Entry entry) {
        final ImmTriggers.Armed trigger = entry.trigger;
        if (trigger == null) {
            return;
        }
        while (entry.count >= entry.expected) {
            entry.count -= entry.expected;
            trigger.fire();
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
        final Stripe stripe = stripe(entry.imm);
        synchronized (stripe) {
            if (stripe.entries.get(entry.imm) != entry) {
                return; // replaced or removed while the listener ran
            }
            if (keep) {
                entry.firing = false;
                fireIfDue(entry);
                return;
            }
            forget(stripe, entry.imm);
            surplus = entry.count;
            listener = immListener;
            if (listener == null && surplus > 0) {
                credit(stripe, entry.imm, surplus, ImmShares.REFUSED); // claimed imms, so past the bound too
            }
        }
        if (listener != null) {
            for (long i = 0; i < surplus; i++) {
                listener.onImm(entry.imm);
            }
        }
    }
}
