package dev.transferengine.reactive;

import dev.transferengine.Device;
import dev.transferengine.ImmCountListener;
import dev.transferengine.ImmTrigger;
import dev.transferengine.MemoryRegion;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerGroup;
import dev.transferengine.ReadRequest;
import dev.transferengine.ReceivePool;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferListener;
import dev.transferengine.TransferRequest;
import dev.transferengine.UvmChange;
import dev.transferengine.UvmWatcher;
import dev.transferengine.WriteRequest;
import dev.transferengine.exceptions.ImmAbandonedException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Schedulers;

/**
 * A Reactor view of a {@link TransferEngine}.
 *
 * <p>Every {@code Mono} is cold: nothing is posted until it is subscribed, and each subscription posts again, so
 * {@code retry()} re-posts and subscribing twice writes twice. Completion signals arrive on the engine's callback
 * thread, which is a {@link reactor.core.scheduler.NonBlocking} thread: {@code block()} there fails fast; move
 * blocking or long work elsewhere with {@code publishOn}.
 *
 * <p><b>Cancellation.</b> Cancelling the {@code Mono} of a write, read or send cancels the operation
 * ({@link TransferEngine#cancel}): one not yet posted is never posted; one posted has its queued pieces withdrawn and
 * ends as cancelled, and pieces already handed to the transport may still land (docs/delivery-contract.md: the
 * receiver fences them by re-keying the region). Cancelling {@link #expectImm(int, int)} withdraws the expectation, keeping its credits. Cancelling
 * {@link #receive()} closes its pool: its buffers are no longer re-posted, and a message already landing in one is
 * dropped.
 *
 * <p><b>Errors</b> are the engine's typed {@link TransferEngineException}s, whether the engine refuses the request
 * at once (bad input, back-pressure, closed) or the transfer fails later.
 */
public final class ReactiveTransferEngine {

    private final TransferEngine engine;
    private final ReactiveOptions options;
    private final TransferObserver observer;
    /** False for {@link TransferObserver#NONE}: then transfers are not even described. */
    private final boolean observed;

    private final Set<ReceivePool> livePools = ConcurrentHashMap.newKeySet();
    private final Set<Integer> arrivalImms = ConcurrentHashMap.newKeySet();
    private final Flux<Integer> unexpectedImms;

    /**
     * A facade with {@link ReactiveOptions#DEFAULTS}, unobserved.
     *
     * @param engine the engine to post through; the facade does not close it
     */
    public ReactiveTransferEngine(final TransferEngine engine) {
        this(engine, ReactiveOptions.DEFAULTS);
    }

    /**
     * A facade with chosen options, unobserved.
     *
     * @param engine the engine to post through; the facade does not close it
     * @param options the receive pool size and the default imm timeout
     */
    public ReactiveTransferEngine(final TransferEngine engine, final ReactiveOptions options) {
        this(engine, options, TransferObserver.NONE);
    }

    /**
     * A facade whose writes, sends and imm waits are wrapped by {@code observer}, e.g. to open a Micrometer
     * {@code Observation} for each (the Spring Boot starter does when an {@code ObservationRegistry} exists).
     *
     * @param engine the engine to post through; the facade does not close it
     * @param options the receive pool size and the default imm timeout
     * @param observer wraps each operation's {@code Mono}; {@link TransferObserver#NONE} skips even describing them
     */
    @SuppressWarnings("ReferenceEquality") // NONE is one instance, and identity is what marks it
    public ReactiveTransferEngine(
            final TransferEngine engine, final ReactiveOptions options, final TransferObserver observer) {
        this.engine = engine;
        this.options = options;
        this.observer = observer;
        this.observed = observer != TransferObserver.NONE;
        this.unexpectedImms = Flux.<Integer>push(this::listenToImms, FluxSink.OverflowStrategy.BUFFER)
                .publish()
                .refCount();
    }

    /**
     * The engine behind this facade.
     *
     * @return the engine given to the constructor
     */
    public TransferEngine engine() {
        return engine;
    }

    /**
     * The options this facade was made with.
     *
     * @return the options, {@link ReactiveOptions#DEFAULTS} unless given
     */
    public ReactiveOptions options() {
        return options;
    }

    /**
     * What wraps this facade's writes, sends and imm waits.
     *
     * @return the observer; {@link TransferObserver#NONE} by default
     */
    public TransferObserver observer() {
        return observer;
    }

    /**
     * Posts {@code request} on subscribe; completes empty when every write of it completed. A write still in flight
     * after the engine's operation timeout fails with {@link TransferTimeoutException}. Cancelling the subscription
     * cancels the write ({@link TransferEngine#cancel}): one not yet posted is never posted; one posted has its queued
     * pieces withdrawn and ends as cancelled, and pieces already handed to the transport may still land.
     *
     * @param request the write, reusable: each subscription submits it again
     * @return a cold {@code Mono} that completes empty on the callback thread, or fails with the engine's typed error
     *     (also for a refusal at submission, e.g. back-pressure)
     */
    public Mono<Void> write(final WriteRequest request) {
        final Mono<Void> write = Mono.create(sink -> {
            try {
                final SinkListener listener = SinkListener.of(sink, engine);
                engine.submit(request, listener);
                listener.submitted();
            } catch (final TransferEngineException | IllegalArgumentException e) {
                sink.error(e);
            }
        });
        return !observed ? write : observer.observe(TransferDescription.of(engine.transport(), request), write);
    }

    /**
     * Posts the read {@code request} on subscribe; completes empty once every byte of it is in the local region. A
     * read carries no imm: to tell the peer, follow it with an imm write, e.g.
     * {@code read(r).then(write(ImmWrite.of(peerMailbox, imm)))}. Timeouts and cancellation as for
     * {@link #write(WriteRequest)}; bytes of a cancelled read already on their way may still land in the local
     * region.
     *
     * @param request the read, reusable: each subscription submits it again
     * @return a cold {@code Mono} that completes empty on the callback thread, or fails with the engine's typed error
     *     (also for a refusal at submission, e.g. a peer region that is write-only)
     */
    public Mono<Void> read(final ReadRequest request) {
        final Mono<Void> read = Mono.create(sink -> {
            try {
                final SinkListener listener = SinkListener.of(sink, engine);
                engine.submit(request, listener);
                listener.submitted();
            } catch (final TransferEngineException | IllegalArgumentException e) {
                sink.error(e);
            }
        });
        return !observed ? read : observer.observe(TransferDescription.of(engine.transport(), request), read);
    }

    /**
     * Sends a copy of {@code message} to {@code peer} (normally the peer's {@link TransferEngine#mainAddress()})
     * on subscribe. The array is read at each subscription, not before.
     *
     * @param peer the receiving NIC's address
     * @param message the bytes to send; copied at each subscription
     * @return a cold {@code Mono} that completes empty once the receiver acknowledged, or fails with the typed error
     */
    public Mono<Void> send(final NetworkAddress peer, final byte[] message) {
        return send(peer, MemorySegment.ofArray(message));
    }

    /**
     * Sends a copy of {@code message} to {@code peer} on subscribe. The segment is read at each subscription.
     *
     * @param peer the receiving NIC's address
     * @param message the bytes to send; copied at each subscription, so the caller may reuse it once subscribed
     * @return a cold {@code Mono} that completes empty once the receiver acknowledged, or fails with the typed error
     */
    public Mono<Void> send(final NetworkAddress peer, final MemorySegment message) {
        final Mono<Void> send = Mono.create(sink -> {
            try {
                final SinkListener listener = SinkListener.of(sink, engine);
                engine.send(peer, message, listener);
                listener.submitted();
            } catch (final TransferEngineException | IllegalArgumentException e) {
                sink.error(e);
            }
        });
        return !observed ? send : observer.observe(TransferDescription.send(engine.transport(), peer), send);
    }

    /**
     * {@link #expectImm(int, int, Duration)} with the default imm timeout, {@link ReactiveOptions#immTimeout()}.
     *
     * @param imm the 32-bit imm value to count
     * @param count how many imm events to wait for (>= 1)
     * @return a cold {@code Mono} that completes empty when they arrived
     */
    public Mono<Void> expectImm(final int imm, final int count) {
        return expectImm(imm, count, options.immTimeout());
    }

    /**
     * On subscribe, expects {@code count} imm events for {@code imm} (those already credited count) and completes
     * when they arrived. Replaces any other expectation for {@code imm}. On timeout it fails with
     * {@link TransferTimeoutException}. On timeout or cancel the expectation is replaced by a plain counter that
     * keeps the imms counted so far, so a retry (or any later expectation for {@code imm}) counts them.
     *
     * @param imm the 32-bit imm value to count
     * @param count how many imm events to wait for (>= 1)
     * @param timeout how long to wait, from subscription
     * @return a cold {@code Mono} that completes empty on the callback thread when they arrived; fails with
     *     {@link TransferTimeoutException} on timeout, with {@link ImmAbandonedException} at once when a sender
     *     abandoned an operation carrying {@code imm} (a negative acknowledgement), or the engine's error for a bad
     *     count or a closed engine
     */
    public Mono<Void> expectImm(final int imm, final int count, final Duration timeout) {
        final Mono<Void> expectation = Mono.create(sink -> {
            final ImmCountListener listener = new ImmCountListener() {
                @Override
                public boolean onReached(final int reached) {
                    sink.success();
                    return false;
                }

                @Override
                public void onAbandoned(final ImmAbandonedException abandoned) {
                    sink.error(abandoned);
                }
            };
            try {
                engine.expectImmCount(imm, count, listener);
            } catch (final TransferEngineException e) {
                sink.error(e);
                return;
            }
            // registered after arming: a subscriber that cancelled already gets this run at once, disarming it.
            // A counter keeps the credits, where removeImmCount would hand them back and lose them for a retry.
            sink.onCancel(() -> engine.immCounter(imm));
        });
        final Mono<Void> wait = expectation.timeout(
                timeout,
                Mono.error(() -> new TransferTimeoutException("expected " + count + " imm events for imm " + imm
                        + " within " + timeout + "; they did not all arrive")));
        return !observed ? wait : observer.observe(TransferDescription.immWait(engine.transport()), wait);
    }

    /**
     * Each arrival of {@code imm}, one element per imm event, valued 1, 2, 3, ... in the order this subscription saw
     * them. Cold: each subscription arms its own counting when it subscribes, and imms already credited for
     * {@code imm} (arrived while nobody counted them) come first. It never completes on its own; bound it with
     * {@code take(n)} or {@code timeout(...)}. Elements are emitted on the engine's callback thread.
     *
     * <p><b>Back-pressure.</b> Imm events are network events and cannot be held back at the sender, so demand does
     * not slow the network; it decides where arrivals wait. While the subscriber has demand, each arrival is emitted
     * at once. When demand reaches zero, the imm value is handed to a plain engine counter: a slow subscriber's
     * arrivals are counted there (one {@code long}, no buffer, no callback, no overflow error), none is dropped, and
     * when the subscriber requests more they are emitted first, one per requested element, then live ones follow.
     *
     * <p><b>Ownership.</b> One imm value has one owner in the engine: at most one {@code immArrivals} subscription
     * per {@code imm} at a time (a second one fails with {@link dev.transferengine.exceptions.InvalidRequestException};
     * use {@code share()} to fan out). An {@link #expectImm(int, int)} or
     * {@link TransferEngine#immCounter(int)} for the same value takes it over, after which this subscription sees no
     * further arrivals. On cancel the value is left to a plain counter that keeps the arrivals not yet emitted, so a
     * later subscription or expectation counts them; an arrival being emitted at the moment of cancellation goes to
     * the cancelled subscriber.
     *
     * @param imm the 32-bit imm value to follow
     * @return a cold {@code Flux} of arrival ordinals; fails with the engine's error if the engine is closed
     */
    public Flux<Long> immArrivals(final int imm) {
        return Flux.create(sink -> ImmArrivals.open(engine, imm, arrivalImms, sink), FluxSink.OverflowStrategy.BUFFER);
    }

    /**
     * A triggered write for as long as the subscription lasts: on subscribe, arms
     * {@link TransferEngine#triggerOnImm(int, int, TransferRequest, TransferListener)}, so that each time {@code count}
     * imms {@code imm} land the engine's worker submits {@code request} itself, with no thread between (an ack, a
     * credit return, a relay). Each firing whose request completed is an element: the firings done so far, 1, 2, 3,
     * ... The first firing that fails ends the {@code Flux} with its error (back-pressure, a closed engine, a request
     * gone bad such as a deregistered region) and disarms the trigger; cancelling disarms it too. Cold: each
     * subscription arms its own trigger, replacing whatever counted {@code imm} before and keeping its credits, which
     * fire it at once. It never completes on its own. Elements are emitted on the engine's callback thread.
     *
     * <p><b>Back-pressure.</b> Firings follow the imms that land, not demand. As each element counts every firing
     * done so far, a subscriber that falls behind gets the latest count when it requests more: nothing is buffered,
     * and no firing goes uncounted.
     *
     * @param imm the 32-bit imm value to count
     * @param count how many imms make the trigger fire once (>= 1)
     * @param request the write or read each firing submits
     * @return a cold {@code Flux} of the firings done so far; fails with the engine's error for a bad argument, a
     *     request that would fire the trigger itself, or a closed engine, and with the first failed firing's error
     */
    public Flux<Long> trigger(final int imm, final int count, final TransferRequest request) {
        return Flux.create(
                sink -> {
                    final AtomicLong done = new AtomicLong();
                    final ImmTrigger trigger;
                    try {
                        trigger = engine.triggerOnImm(imm, count, request, new TransferListener() {
                            @Override
                            public void onDone() {
                                sink.next(done.incrementAndGet());
                            }

                            @Override
                            public void onError(final TransferEngineException error) {
                                sink.error(error);
                            }
                        });
                    } catch (final TransferEngineException e) {
                        sink.error(e);
                        return;
                    }
                    // registered after arming: a subscription that ended already (cancelled, or failed by a firing
                    // of credits that were there) runs it at once
                    sink.onDispose(trigger::close);
                },
                FluxSink.OverflowStrategy.LATEST);
    }

    /**
     * Messages received on group 0, NIC 0, each copied out of its receive buffer. Each subscription posts its own
     * pool of {@link ReactiveOptions#receivePoolSize()} buffers when it subscribes (on a bounded-elastic thread,
     * since posting waits for the worker) and closes it when it ends; several subscriptions share the incoming
     * messages, each getting those that land in its buffers.
     *
     * <p>Demand is receive credit: each requested message lets the engine post one buffer of this subscription's
     * pool (at most {@code receivePoolSize} at once), so the engine never holds more messages than the subscriber
     * asked for; a sender that finds no posted buffer gets {@code RemoteAccessException(NO_RECEIVE_BUFFER)}.
     *
     * @return a cold {@code Flux} of messages, each a heap copy; it never completes on its own, and fails with the
     *     engine's error if the pool cannot be posted
     */
    public Flux<ReceivedMessage> receive() {
        return Flux.<ReceivedMessage>create(
                        sink -> ReceiveSubscription.open(engine, options, livePools, sink),
                        FluxSink.OverflowStrategy.BUFFER)
                .subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * Receive buffers posted and waiting for a message right now, all {@link #receive()} subscriptions together. Any
     * thread; a moment's view, for metrics and tests.
     *
     * @return the number of posted buffers
     */
    public int postedReceives() {
        int posted = 0;
        for (final ReceivePool pool : livePools) {
            posted += pool.available();
        }
        return posted;
    }

    /**
     * Changes of a fresh UVM watcher, as a cold {@code Flux}: each subscription allocates its own watcher, hands it
     * to {@code onAllocated} (where the caller passes {@link UvmWatcher#devicePointer()} to its kernel or CUDA graph)
     * and then emits every change the polling thread sees; cancelling releases the slot. GPU stores cannot be held
     * back, so changes beyond demand are buffered. Fails with {@link dev.transferengine.exceptions.DeviceUnavailableException}
     * where the engine has no GPU.
     *
     * @param onAllocated called once per subscription with the new watcher, on the subscribing thread, right after
     *     it is allocated
     * @return a cold {@code Flux} of changes, emitted on the callback thread
     */
    public Flux<UvmChange> watch(final Consumer<UvmWatcher> onAllocated) {
        return Flux.create(
                sink -> {
                    final UvmWatcher watcher;
                    try {
                        watcher = engine.allocUvmWatcher((oldValue, newValue) -> {
                            sink.next(new UvmChange(oldValue, newValue));
                            return !sink.isCancelled();
                        });
                    } catch (final TransferEngineException e) {
                        sink.error(e);
                        return;
                    }
                    sink.onDispose(watcher::close);
                    onAllocated.accept(watcher);
                },
                FluxSink.OverflowStrategy.BUFFER);
    }

    /**
     * Imms that no expectation or counter claims, while at least one subscriber listens; shared by all
     * subscribers. Imms are network events and cannot be held back, so a slow subscriber's imms are buffered.
     * While nobody subscribes, the engine credits them instead (later expectations count them).
     *
     * @return a hot, shared {@code Flux} of imm values, emitted on the callback thread
     */
    public Flux<Integer> unexpectedImms() {
        return unexpectedImms;
    }

    /**
     * Registers host or device memory on subscribe, on a bounded-elastic thread, since registration blocks.
     *
     * @param segment the memory, as for {@link TransferEngine#register(MemorySegment, Device)}
     * @param device where the memory lives
     * @return a cold {@code Mono} of the region; each subscription registers again
     */
    public Mono<MemoryRegion> register(final MemorySegment segment, final Device device) {
        return Mono.fromCallable(() -> engine.register(segment, device)).subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * Allocates and registers engine-owned memory on subscribe, on a bounded-elastic thread, since it blocks; see
     * {@link TransferEngine#allocate(Device, long)}. {@link #deregister} frees it once nothing touches it.
     *
     * @param device where the memory lives
     * @param bytes how much, more than 0
     * @return a cold {@code Mono} of the region; each subscription allocates again
     */
    public Mono<MemoryRegion> allocate(final Device device, final long bytes) {
        return Mono.fromCallable(() -> engine.allocate(device, bytes)).subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * Deregisters on subscribe, on a bounded-elastic thread, since deregistration blocks (and, for allocated memory,
     * waits until nothing touches it, then frees it).
     *
     * @param region a region the engine registered
     * @return a cold {@code Mono} that completes empty once every NIC dropped the region
     */
    public Mono<Void> deregister(final MemoryRegion region) {
        return Mono.<Void>fromRunnable(() -> engine.deregister(region)).subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * Resolves a peer group on subscribe, on a bounded-elastic thread, since resolution blocks.
     *
     * @param peers per peer, its NIC addresses in NIC order
     * @return a cold {@code Mono} of the group
     */
    public Mono<PeerGroup> addPeerGroup(final List<List<NetworkAddress>> peers) {
        return Mono.fromCallable(() -> engine.addPeerGroup(peers)).subscribeOn(Schedulers.boundedElastic());
    }

    private void listenToImms(final FluxSink<Integer> sink) {
        engine.onImm(sink::next);
        sink.onDispose(() -> engine.onImm(null));
    }

    /**
     * Completes one {@code Mono} from the engine's callback thread; a cancelled subscription cancels the operation.
     * The cancellation is watched from before the submission: one that comes before the worker takes the operation
     * is seen through {@link #isCancelled()} and the operation is never posted; one that comes later withdraws it
     * through {@link TransferEngine#cancel}.
     */
    private static final class SinkListener implements TransferListener {

        private final MonoSink<Void> sink;
        private final TransferEngine engine;
        private volatile boolean cancelled;
        private volatile boolean submitted;

        private SinkListener(final MonoSink<Void> sink, final TransferEngine engine) {
            this.sink = sink;
            this.engine = engine;
        }

        /** A listener for {@code sink} that watches its cancellation; submit with it, then call {@link #submitted}. */
        static SinkListener of(final MonoSink<Void> sink, final TransferEngine engine) {
            final SinkListener listener = new SinkListener(sink, engine);
            sink.onCancel(listener::cancel); // runs at once if the subscriber cancelled already
            return listener;
        }

        /** The operation was handed to the engine: a cancellation that came meanwhile withdraws it now. */
        void submitted() {
            submitted = true;
            if (cancelled) {
                engine.cancel(this);
            }
        }

        private void cancel() {
            cancelled = true;
            if (submitted) {
                engine.cancel(this);
            }
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public void onDone() {
            sink.success();
        }

        @Override
        public void onError(final TransferEngineException error) {
            sink.error(error);
        }
    }
}
