package dev.transferengine.boot.test;

import dev.transferengine.NicInfo;
import dev.transferengine.TransferEngine;
import dev.transferengine.test.HoldingDomain;

import java.time.Duration;
import java.util.List;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Fault injection for an application's transfer code, from the conformance kit: with
 * {@link AutoConfigureTransferEngineFaults} both loopback engines run the kit's holding transport over tcp, whose
 * NICs can hold what they would post, and a manual clock. A test holds the application's or the peer's traffic (or
 * both: a partition), kills the peer, and expires deadlines, then checks that its code ends every transfer the way
 * it should. Thread-safe; every method returns at once.
 */
public final class TransferEngineFaults {

    /** How far each step of {@link #expiring} moves the clock: past any timeout an application configures. */
    private static final long STEP_NANOS = Duration.ofDays(1).toNanos();

    /** How often {@link #expiring} moves the clock: each move lets the workers see the deadlines pass. */
    private static final Duration STEP_EVERY = Duration.ofMillis(10);

    private final TransferEngine application;
    private final LoopbackPeer peer;
    private final FaultClock clock;

    TransferEngineFaults(final TransferEngine application, final LoopbackPeer peer, final FaultClock clock) {
        this.application = application;
        this.peer = peer;
        this.clock = clock;
    }

    /** What a hold keeps back until it is released; releasing posts the held writes and sends in order. */
    public interface Hold extends AutoCloseable {

        /** Lets the held traffic go; idempotent. */
        @Override
        void close();
    }

    /**
     * Holds every write and send of the application's engine at its NICs, as a stalled link would: nothing it
     * posts leaves until the hold is closed (incoming traffic still arrives).
     *
     * @return the hold; close it to let the traffic go
     * @throws IllegalStateException if the application's engine is not the auto-configured loopback one
     */
    public Hold holdApplication() {
        return hold(List.of(application));
    }

    /**
     * Holds every write and send of the peer's engine.
     *
     * @return the hold; close it to let the traffic go
     */
    public Hold holdPeer() {
        return hold(List.of(peer.engine()));
    }

    /**
     * Partitions the pair: neither engine's writes or sends reach the other until the hold is closed.
     *
     * @return the hold; close it to heal the partition
     */
    public Hold partition() {
        return hold(List.of(application, peer.engine()));
    }

    /**
     * Kills the peer: closes its engine, so what it held fails on its side, its connections close, and the
     * application's writes to it fail from now on. Idempotent.
     */
    public void killPeer() {
        peer.close();
    }

    /**
     * Subscribes to {@code operation} and, until it ends, keeps moving both engines' clock a day forward every
     * few milliseconds, so that its deadline passes however slow the machine is: a write held by
     * {@link #holdApplication()} then fails with {@code TransferTimeoutException}. Cold.
     *
     * @param operation the operation whose deadline should pass, e.g. a held write
     * @param <T> what the operation emits
     * @return the operation, ending as it ends
     */
    public <T> Mono<T> expiring(final Mono<T> operation) {
        return Mono.defer(() -> {
            final Disposable moving =
                    Flux.interval(Duration.ZERO, STEP_EVERY).subscribe(tick -> clock.advance(STEP_NANOS));
            return operation.doFinally(signal -> moving.dispose());
        });
    }

    private static Hold hold(final List<TransferEngine> engines) {
        final List<HoldingDomain> nics = engines.stream()
                .flatMap(engine -> engine.nics().stream())
                .map(NicInfo::address)
                .map(HoldingDomain::at)
                .toList();
        nics.forEach(nic -> nic.hold(true));
        return () -> nics.forEach(nic -> nic.hold(false));
    }
}
