package dev.transferengine.reactive;

import dev.transferengine.TransferEngine;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransferEngineException;

import java.util.Set;

import reactor.core.publisher.FluxSink;

/**
 * One {@link ReactiveTransferEngine#immArrivals(int)} subscription. While the subscriber has demand, the imm value
 * is armed as an expectation of one imm that re-arms after each arrival, so each arrival becomes one element. When
 * demand runs out the expectation is swapped for a plain engine counter, which keeps counting arrivals as a number
 * (no buffer, no callback); new demand re-arms the expectation, which takes those credits first. Arming and disarming
 * happen under one lock, always taken before the engine's own, so a request racing an arrival never loses or
 * doubles one.
 */
final class ImmArrivals {

    private final TransferEngine engine;
    private final int imm;
    private final Set<Integer> active;
    private final FluxSink<Long> sink;
    private final Object lock = new Object();
    /** Guarded by {@link #lock}: an expectation (not a counter) holds the imm value. */
    private boolean armed;
    /** Guarded by {@link #lock}: the subscription ended. */
    private boolean ended;
    /** Guarded by {@link #lock}: arrivals emitted so far. */
    private long emitted;

    private ImmArrivals(
            final TransferEngine engine, final int imm, final Set<Integer> active, final FluxSink<Long> sink) {
        this.engine = engine;
        this.imm = imm;
        this.active = active;
        this.sink = sink;
    }

    /** Claims {@code imm} for this subscription, or fails the sink if another arrivals subscription holds it. */
    static void open(final TransferEngine engine, final int imm, final Set<Integer> active, final FluxSink<Long> sink) {
        if (!active.add(imm)) {
            sink.error(new InvalidRequestException("imm " + imm + " already has an immArrivals subscriber; share one"
                    + " subscription (share(), publish()) instead of subscribing twice"));
            return;
        }
        try {
            engine.immCounter(imm); // claims the value at once, so no arrival goes to unexpectedImms before demand
        } catch (final TransferEngineException e) {
            active.remove(imm);
            sink.error(e);
            return;
        }
        final ImmArrivals arrivals = new ImmArrivals(engine, imm, active, sink);
        sink.onRequest(arrivals::requested);
        sink.onDispose(arrivals::end);
    }

    private void requested(final long demand) {
        synchronized (lock) {
            if (armed || ended) {
                return;
            }
            try {
                engine.expectImmCount(imm, 1, this::reached);
                armed = true;
            } catch (final TransferEngineException e) {
                sink.error(e);
            }
        }
    }

    /** Callback thread: one imm arrived (or was credited before the expectation was armed). */
    private boolean reached(final int value) {
        synchronized (lock) {
            if (ended || !armed) {
                return false; // already replaced by a counter, which kept every other credit
            }
            sink.next(++emitted);
            if (!armed) {
                return false; // the subscriber cancelled in onNext, which already disarmed
            }
            if (sink.requestedFromDownstream() > 0) {
                return true;
            }
            // no demand left: count further arrivals in the engine instead of buffering them here
            disarm();
            return false;
        }
    }

    private void end() {
        synchronized (lock) {
            ended = true;
            if (armed) {
                disarm();
            }
        }
        active.remove(imm);
    }

    /** Lock held: a counter replaces the expectation and keeps its credits, so no arrival is dropped. */
    private void disarm() {
        armed = false;
        try {
            engine.immCounter(imm);
        } catch (final TransferEngineException e) {
            if (!ended) {
                sink.error(e);
            }
        }
    }
}
