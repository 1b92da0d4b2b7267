package dev.transferengine.autoconfigure.observation;

import dev.transferengine.exceptions.TransferTimeoutException;
import dev.transferengine.reactive.TransferDescription;
import dev.transferengine.reactive.TransferObserver;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Opens an {@link Observation} for each subscription to a transfer's {@code Mono}: started on subscribe, stopped
 * when it completes, fails or is cancelled. Its parent is the observation in the subscriber's Reactor context (where
 * WebFlux puts the HTTP request's), else the registry's current one; it is put into the context of the transfer in
 * turn. The Reactor context key is Micrometer's {@code ObservationThreadLocalAccessor.KEY}, written out so that the
 * context-propagation library need not be present.
 */
public final class ObservationTransferObserver implements TransferObserver {

    /** Where Spring WebFlux and Micrometer keep the current observation in a Reactor context. */
    public static final String CONTEXT_KEY = "micrometer.observation";

    private static final TransferObservationConvention DEFAULT = new DefaultTransferObservationConvention();

    private final ObservationRegistry registry;
    private final @Nullable TransferObservationConvention convention;
    private final String engine;

    /**
     * An observer that opens one observation per subscription, child of the one in the Reactor context.
     *
     * @param registry   where the observations go
     * @param convention replaces {@link DefaultTransferObservationConvention} when not null
     */
    public ObservationTransferObserver(
            final ObservationRegistry registry, final @Nullable TransferObservationConvention convention) {
        this(registry, convention, "unnamed");
    }

    private ObservationTransferObserver(
            final ObservationRegistry registry,
            final @Nullable TransferObservationConvention convention,
            final String engine) {
        this.registry = registry;
        this.convention = convention;
        this.engine = engine;
    }

    /**
     * This observer for the facade of one engine: its observations carry {@code engine=<name>}, so that the
     * transfers of two engines of one application can be told apart, as on the engine's own meters.
     *
     * @param engineName the engine's bean name
     * @return an observer like this one that names the engine
     */
    public ObservationTransferObserver forEngine(final String engineName) {
        return new ObservationTransferObserver(registry, convention, engineName);
    }

    /**
     * {@code observer} for the facade of one engine: {@link #forEngine(String)} where it is one of these, else
     * {@code observer} itself.
     *
     * @param observer   the application's observer
     * @param engineName the engine's bean name
     * @return the observer to give that engine's facade
     */
    public static TransferObserver forEngine(final TransferObserver observer, final String engineName) {
        return observer instanceof final ObservationTransferObserver observations
                ? observations.forEngine(engineName)
                : observer;
    }

    @Override
    public Mono<Void> observe(final TransferDescription transfer, final Mono<Void> mono) {
        return Mono.deferContextual(reactorContext -> {
            final Object inContext = reactorContext.getOrDefault(CONTEXT_KEY, null);
            final Observation parent =
                    inContext instanceof final Observation found ? found : registry.getCurrentObservation();
            final TransferObservationContext context = new TransferObservationContext(engine, transfer);
            final Observation observation = Observation.createNotStarted(convention, DEFAULT, () -> context, registry)
                    .parentObservation(parent)
                    .start();
            // stopped before the signal goes on (not in doFinally), so whoever sees the end sees it stopped
            return mono.doOnSuccess(ignored -> {
                        context.outcome("success");
                        observation.stop();
                    })
                    .doOnError(error -> {
                        context.outcome(error instanceof TransferTimeoutException ? "timeout" : "failure");
                        observation.error(error).stop();
                    })
                    .doOnCancel(() -> {
                        context.outcome("cancelled");
                        observation.stop();
                    })
                    .contextWrite(downstream -> downstream.put(CONTEXT_KEY, observation));
        });
    }
}
