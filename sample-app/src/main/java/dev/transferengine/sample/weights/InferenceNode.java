package dev.transferengine.sample.weights;

import dev.transferengine.reactive.ReactiveTransferEngine;
import dev.transferengine.sample.BusyException;
import dev.transferengine.sample.Checksums;
import dev.transferengine.sample.HostBuffer;
import dev.transferengine.sample.Millis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * An inference node: a registered buffer the trainer scatters its tensors into. The trainer's barrier imm, which it
 * sends only after every scatter write completed, says that the whole push has landed; then the tensors are checked.
 */
public final class InferenceNode implements AutoCloseable {

    /** The imm of the trainer's barrier; distinct from the KV layers' imms, which are small layer numbers. */
    public static final int BARRIER_IMM = 0x7EA0_0001;

    private static final Logger LOG = LoggerFactory.getLogger(InferenceNode.class);

    private final ReactiveTransferEngine engine;
    private final TensorLayout layout;
    private final Duration receiveTimeout;
    private final HostBuffer buffer;
    private final AtomicReference<Pending> pending = new AtomicReference<>();

    /**
     * Allocates and registers the destination buffer.
     *
     * @param engine         the engine the trainer writes through
     * @param layout         the tensors
     * @param receiveTimeout how long a push may take from the trainer's notice to its barrier
     */
    public InferenceNode(
            final ReactiveTransferEngine engine, final TensorLayout layout, final Duration receiveTimeout) {
        this.engine = engine;
        this.layout = layout;
        this.receiveTimeout = receiveTimeout;
        this.buffer = new HostBuffer(engine.engine(), layout.bytes());
    }

    /** What the trainer needs to write here. */
    public WeightsDescriptor descriptor() {
        return new WeightsDescriptor(
                engine.engine().mainAddress().toString(),
                buffer.region().descriptor().toText(),
                layout.tensors());
    }

    /**
     * Arms the barrier expectation for push {@code expectation.version()}.
     *
     * @param expectation the version and the trainer's checksums
     * @throws BusyException if an earlier push has not ended
     */
    public void expect(final WeightsExpectation expectation) {
        final Pending previous = pending.get();
        if (previous != null && !previous.finished) {
            throw new BusyException("inference is still receiving push " + previous.expectation.version());
        }
        final Pending next = new Pending(expectation);
        if (!pending.compareAndSet(previous, next)) {
            throw new BusyException("another push was announced at the same time");
        }
        next.arm();
    }

    /**
     * Waits for the barrier of push {@code version}, then checks every tensor.
     *
     * @param version the push
     * @return the receipt; fails with the engine's timeout if the barrier never came
     */
    public Mono<InferenceReceipt> verification(final long version) {
        final Pending current = pending.get();
        if (current == null || current.expectation.version() != version) {
            return Mono.error(new IllegalArgumentException("push " + version + " was not announced"));
        }
        return current.barrier.publishOn(Schedulers.boundedElastic()).map(current::receipt);
    }

    @Override
    public void close() {
        buffer.close();
    }

    /** A push announced and not yet verified. */
    private final class Pending {

        private final WeightsExpectation expectation;
        private final long start = System.nanoTime();
        private final Mono<Long> barrier;
        private volatile boolean finished;

        Pending(final WeightsExpectation expectation) {
            this.expectation = expectation;
            this.barrier = engine.expectImm(BARRIER_IMM, 1, receiveTimeout)
                    .then(Mono.fromSupplier(() -> System.nanoTime() - start))
                    .doFinally(signal -> finished = true)
                    .cache();
        }

        /** Subscribing arms the expectation before the trainer hears back, so the barrier cannot be missed. */
        void arm() {
            barrier.subscribe(
                    waited -> {},
                    error -> LOG.warn("push {} not received: {}", expectation.version(), error.toString()));
        }

        InferenceReceipt receipt(final long waitedNanos) {
            final List<InferenceReceipt.Tensor> tensors =
                    new ArrayList<>(layout.tensors().size());
            boolean verified = true;
            for (final TensorLayout.Tensor tensor : layout.tensors()) {
                final long checksum = Checksums.crc32c(buffer.segment(), tensor.offset(), tensor.length());
                final Long expected = expectation.checksums().get(tensor.name());
                final boolean matches = expected != null && expected == checksum;
                verified &= matches;
                tensors.add(new InferenceReceipt.Tensor(tensor.name(), checksum, matches));
            }
            final double waited = Millis.of(waitedNanos);
            LOG.info(
                    "received push {}: {} tensors, {} bytes, barrier after {} ms, verified={}",
                    expectation.version(),
                    tensors.size(),
                    layout.bytes(),
                    waited,
                    verified);
            return new InferenceReceipt(expectation.version(), layout.bytes(), waited, tensors, verified);
        }
    }
}
