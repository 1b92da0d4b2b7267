package dev.transferengine.core;

import dev.transferengine.BarrierWrite;
import dev.transferengine.ImmTrigger;
import dev.transferengine.ImmWrite;
import dev.transferengine.NicInfo;
import dev.transferengine.PagedWrite;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.ScatterTarget;
import dev.transferengine.ScatterWrite;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferListener;
import dev.transferengine.TransferRequest;
import dev.transferengine.WriteRequest;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransferEngineException;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

import static dev.transferengine.core.ApiCalls.given;

/**
 * Triggered writes: arms {@link ImmTrigger}s in the {@link ImmCountTable} and fires them. A firing runs on the thread
 * that counted the trigger's last imm (a worker, or the arming caller for credits already there) and does what a
 * submit does, without the caller's checks of nulls: checks the request again (its region may have been deregistered
 * since), takes a pooled {@link Submission} and queues it to the request's group. From that group's own worker the
 * queue is taken at its next duty cycle, with no hand-off between cores. A firing that cannot be queued (the queue
 * full, the engine closed, the request no longer valid) ends its submission at once with the typed error, through the
 * trigger's listener or counters: never thrown on the worker, never dropped.
 */
final class ImmTriggers {

    private final Engine engine;
    private final RequestChecks checks;
    private final WorkerServices services;

    ImmTriggers(final Engine engine, final RequestChecks checks, final WorkerServices services) {
        this.engine = engine;
        this.checks = checks;
        this.services = services;
    }

    /** Caller's thread: checks as submit does, then arms; credits already there fire it at once, here. */
    ImmTrigger arm(
            final int imm,
            final int count,
            final TransferRequest request,
            final @Nullable TransferListener listener,
            final @Nullable TransferCounters counters) {
        given(request, "request");
        if (count < 1) {
            throw new InvalidRequestException("a trigger's imm count must be >= 1, was " + count);
        }
        engine.enter();
        try {
            checks.check(request);
            if (firesItself(imm, request)) {
                throw new InvalidRequestException("a trigger for imm " + imm + " whose request writes imm " + imm
                        + " to this engine would fire itself at every landing and never stop; give the request"
                        + " another imm");
            }
            final Armed trigger = new Armed(imm, count, request, listener, counters);
            services.imms().trigger(trigger);
            return trigger;
        } finally {
            engine.exit();
        }
    }

    /** Whether {@code request} lands {@code imm} on this engine, where each landing would fire the trigger again. */
    private boolean firesItself(final int imm, final TransferRequest request) {
        if (!(request instanceof WriteRequest write)
                || write.imm().isEmpty()
                || write.imm().getAsInt() != imm) {
            return false;
        }
        final List<RegionDescriptor> destinations =
                switch (write) {
                    case SingleWrite w -> List.of(w.dst());
                    case PagedWrite w -> List.of(w.dst());
                    case ImmWrite w -> List.of(w.dst());
                    case BarrierWrite w -> w.dsts();
                    case ScatterWrite w ->
                        w.targets().stream().map(ScatterTarget::dst).toList();
                };
        final List<NicInfo> own = engine.nics();
        return destinations.stream().flatMap(dst -> dst.nics().stream()).anyMatch(nic -> own.stream()
                .anyMatch(mine -> mine.address().equals(nic.address())));
    }

    /**
     * Counting thread, its imm's stripe locked: one submission of {@code trigger}'s request, through the engine's door
     * and checks as a submit (so none is queued to a stopping worker); never throws.
     */
    private void fire(final Armed trigger) {
        trigger.fired.incrementAndGet();
        if (!engine.tryEnter()) {
            fail(trigger, engine.closedError);
            return;
        }
        try {
            final DomainGroup full = engine.offerWrite(trigger.request, trigger.listener, trigger.counters, null);
            if (full != null) { // counted as back-pressure
                fail(trigger, full.backPressure());
            }
        } catch (final TransferEngineException e) { // the request went bad since it was armed
            fail(trigger, e);
        } finally {
            engine.exit();
        }
    }

    /** Ends a firing that was not queued as a failed request: its listener or counters hear of it, it is counted. */
    private void fail(final Armed trigger, final TransferEngineException error) {
        final Submission s = services.pool().acquire().write(trigger.request, trigger.listener, trigger.counters, null);
        services.counters().inFlight(1); // the submission's end takes it back
        s.complete(error, services.callbacks(), services.counters());
        services.pool().recycle(s);
    }

    /** One armed trigger: what it submits and to whom it reports; the imm table holds it as the imm's entry. */
    final class Armed implements ImmTrigger {
        private final int imm;
        private final int count;
        private final TransferRequest request;
        private final @Nullable TransferListener listener;
        private final @Nullable TransferCounters counters;
        private final AtomicLong fired = new AtomicLong();

        private Armed(
                final int imm,
                final int count,
                final TransferRequest request,
                final @Nullable TransferListener listener,
                final @Nullable TransferCounters counters) {
            this.imm = imm;
            this.count = count;
            this.request = request;
            this.listener = listener;
            this.counters = counters;
        }

        /** Counting thread, stripe locked. */
        void fire() {
            ImmTriggers.this.fire(this);
        }

        @Override
        public int imm() {
            return imm;
        }

        @Override
        public int count() {
            return count;
        }

        @Override
        public long fired() {
            return fired.get();
        }

        @Override
        public void close() {
            services.imms().disarm(this);
        }

        @Override
        public String toString() {
            return "ImmTrigger[imm " + imm + ", every " + count + ", fired " + fired.get() + "]";
        }
    }
}
