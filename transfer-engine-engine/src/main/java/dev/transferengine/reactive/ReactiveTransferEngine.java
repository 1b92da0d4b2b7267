package dev.transferengine.reactive;

import dev.transferengine.Device;
import dev.transferengine.ImmCountListener;
import dev.transferengine.MemoryRegion;
import dev.transferengine.NetAddr;
import dev.transferengine.PeerGroup;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineException;
import dev.transferengine.TransferListener;
import dev.transferengine.TransferTimeoutException;
import dev.transferengine.WriteRequest;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

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
 * <p><b>Cancellation.</b> A write or send already handed to the engine cannot be recalled: cancelling its
 * {@code Mono} only releases the subscriber, and the transfer still ends (done, failed or timed out) inside the
 * engine. Cancelling {@link #expectImm(int, int)} removes the expectation. Cancelling {@link #receive()} closes
 * its posted buffers; a message landing in one of them at that moment is dropped.
 *
 * <p><b>Errors</b> are the engine's typed {@link TransferEngineException}s, whether the engine refuses the request
 * at once (bad input, back-pressure, closed) or the transfer fails later.
 */
public final class ReactiveTransferEngine {

    private final TransferEngine engine;
    private final ReactiveOptions options;
    private final AtomicInteger postedReceives = new AtomicInteger();
    private final Flux<Integer> unexpectedImms;

    /** A facade with {@link ReactiveOptions#DEFAULTS}. */
    public ReactiveTransferEngine(final TransferEngine engine) {
        this(engine, ReactiveOptions.DEFAULTS);
    }

    public ReactiveTransferEngine(final TransferEngine engine, final ReactiveOptions options) {
        this.engine = engine;
        this.options = options;
        this.unexpectedImms = Flux.<Integer>push(this::listenToImms, FluxSink.OverflowStrategy.BUFFER)
            .publish()
            .refCount();
    }

    /** The engine behind this facade. */
    public TransferEngine engine() {
        return engine;
    }

    public ReactiveOptions options() {
        return options;
    }

    /**
     * Posts {@code request} on subscribe; completes empty when every write of it completed. A write still in flight
     * after the engine's operation timeout fails with {@link TransferTimeoutException}.
     */
    public Mono<Void> write(final WriteRequest request) {
        return Mono.create(sink -> {
            try {
                engine.submit(request, new SinkListener(sink));
            } catch (final TransferEngineException | IllegalArgumentException e) {
                sink.error(e);
            }
        });
    }

    /**
     * Sends a copy of {@code message} to {@code peer} (normally the peer's {@link TransferEngine#mainAddress()})
     * on subscribe. The array is read at each subscription, not before.
     */
    public Mono<Void> send(final NetAddr peer, final byte[] message) {
        return send(peer, MemorySegment.ofArray(message));
    }

    /** Sends a copy of {@code message} to {@code peer} on subscribe. The segment is read at each subscription. */
    public Mono<Void> send(final NetAddr peer, final MemorySegment message) {
        return Mono.create(sink -> {
            try {
                engine.send(peer, message, new SinkListener(sink));
            } catch (final TransferEngineException | IllegalArgumentException e) {
                sink.error(e);
            }
        });
    }

    /** {@link #expectImm(int, int, Duration)} with the default imm timeout. */
    public Mono<Void> expectImm(final int imm, final int count) {
        return expectImm(imm, count, options.immTimeout());
    }

    /**
     * On subscribe, expects {@code count} imm events for {@code imm} (those already credited count) and completes
     * when they arrived. Replaces any other expectation for {@code imm}. On timeout it fails with
     * {@link TransferTimeoutException}; on timeout or cancel the expectation is removed, and the imms counted so
     * far stay credited.
     */
    public Mono<Void> expectImm(final int imm, final int count, final Duration timeout) {
        if (count < 1) {
            return Mono.error(new IllegalArgumentException("an imm expectation needs a count >= 1, was " + count));
        }
        final Mono<Void> expectation = Mono.create(sink -> {
            final ImmCountListener listener = reached -> {
                sink.success();
                return false;
            };
            sink.onCancel(() -> engine.removeImmCount(imm));
            engine.expectImmCount(imm, count, listener);
        });
        return expectation.timeout(timeout, Mono.error(() -> new TransferTimeoutException(
            "expected " + count + " imm events for imm " + imm + " within " + timeout + "; they did not all arrive")));
    }

    /**
     * Messages received on group 0, NIC 0, each copied out of its receive buffer. Demand is receive credit: a
     * subscription keeps as many buffers posted as it has outstanding demand, at most
     * {@link ReactiveOptions#receivePoolSize()}, so a slow subscriber slows its senders instead of filling a queue.
     * Several subscriptions share the incoming messages, each getting those that land in its own buffers.
     */
    public Flux<ReceivedMessage> receive() {
        return Flux.create(sink -> new ReceiveCredit(engine, options, sink, postedReceives).start(),
            FluxSink.OverflowStrategy.ERROR);
    }

    /** Receive buffers posted right now by all {@link #receive()} subscriptions together. */
    public int postedReceives() {
        return postedReceives.get();
    }

    /**
     * Imms that no expectation or counter claims, while at least one subscriber listens; shared by all
     * subscribers. Imms are network events and cannot be held back, so a slow subscriber's imms are buffered.
     * While nobody subscribes, the engine credits them instead (later expectations count them).
     */
    public Flux<Integer> unexpectedImms() {
        return unexpectedImms;
    }

    /** Registers host or device memory on subscribe, on a bounded-elastic thread, since registration blocks. */
    public Mono<MemoryRegion> register(final MemorySegment segment, final Device device) {
        return Mono.fromCallable(() -> engine.register(segment, device)).subscribeOn(Schedulers.boundedElastic());
    }

    /** Deregisters on subscribe, on a bounded-elastic thread. */
    public Mono<Void> deregister(final MemoryRegion region) {
        return Mono.<Void>fromRunnable(() -> engine.deregister(region)).subscribeOn(Schedulers.boundedElastic());
    }

    /** Resolves a peer group on subscribe, on a bounded-elastic thread, since resolution blocks. */
    public Mono<PeerGroup> addPeerGroup(final List<List<NetAddr>> peers) {
        return Mono.fromCallable(() -> engine.addPeerGroup(peers)).subscribeOn(Schedulers.boundedElastic());
    }

    private void listenToImms(final FluxSink<Integer> sink) {
        engine.onImm(sink::next);
        sink.onDispose(() -> engine.onImm(null));
    }

    /** Completes one {@code Mono} from the engine's callback thread. */
    private record SinkListener(MonoSink<Void> sink) implements TransferListener {

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
