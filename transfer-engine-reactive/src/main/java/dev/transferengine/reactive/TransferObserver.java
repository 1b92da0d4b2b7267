package dev.transferengine.reactive;

import reactor.core.publisher.Mono;

/**
 * Wraps the {@code Mono} of each write, send and imm wait of a {@link ReactiveTransferEngine}, to observe it (the
 * Spring Boot starter's implementation opens a Micrometer {@code Observation} per subscription, child of the one in
 * the Reactor context). Keeps the engine free of any observation library.
 *
 * <p>Called on the thread that asks the facade for the {@code Mono}, once per {@code Mono}; what the returned
 * {@code Mono} does at each subscription is up to the observer. It must return a {@code Mono} that subscribes to
 * {@code transfer} exactly once per subscription of its own and passes its signals on.
 */
@FunctionalInterface
public interface TransferObserver {

    /** Observes nothing: the facade hands out its {@code Mono}s as they are, without describing them. */
    TransferObserver NONE = (transfer, mono) -> mono;

    /**
     * Wraps the {@code Mono} of one operation.
     *
     * @param transfer what the {@code Mono} does
     * @param mono     the cold {@code Mono} of the operation
     * @return {@code mono}, wrapped
     */
    Mono<Void> observe(TransferDescription transfer, Mono<Void> mono);
}
