package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.RegionDescriptor;
import dev.transferengine.autoconfigure.exchange.DescriptorFetcher;
import dev.transferengine.autoconfigure.exchange.PublishedRegions;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A {@link DescriptorRegistry} over the descriptor exchange: this service publishes through its
 * {@link PublishedRegions} (served at {@code transfer-engine.exchange.path} while its web server runs), and finds a
 * peer by fetching from the base URL configured for the peer's name. There is no store: the lease is the peer's web
 * server answering, so a peer that does not answer (connection refused or reset, or 404) is not there, and the
 * generation is the one its {@link PublishedRegions} keeps. {@link #watch()} polls every named peer.
 */
public final class HttpDescriptorRegistry implements DescriptorRegistry {

    private final String name;
    private final PublishedRegions published;
    private final DescriptorFetcher fetcher;
    private final Map<String, String> peers;
    private final Duration watchInterval;
    /** Completes the watches when the registry closes. */
    private final Sinks.Empty<Void> closing = Sinks.empty();

    /**
     * A registry over the exchange.
     *
     * @param engineName    this engine's name
     * @param published     what this service serves at its descriptor endpoint
     * @param fetcher       reads a peer's endpoint
     * @param peers         the peers' base URLs (e.g. {@code http://10.0.0.2:8080}) by engine name
     * @param watchInterval how often a watch polls the peers, positive
     */
    public HttpDescriptorRegistry(
            final String engineName,
            final PublishedRegions published,
            final DescriptorFetcher fetcher,
            final Map<String, String> peers,
            final Duration watchInterval) {
        if (watchInterval.isNegative() || watchInterval.isZero()) {
            throw new IllegalArgumentException("the watch interval must be positive, was " + watchInterval);
        }
        this.name = RegistryNames.engine(engineName);
        this.published = published;
        this.fetcher = fetcher;
        this.peers = Map.copyOf(peers);
        this.watchInterval = watchInterval;
    }

    @Override
    public String engineName() {
        return name;
    }

    /** Nothing to do: the endpoint serves this engine while the web server runs. */
    @Override
    public Mono<Void> announce() {
        return Mono.empty();
    }

    @Override
    public Mono<Void> publish(final String region, final RegionDescriptor descriptor) {
        return Mono.fromRunnable(() -> published.publish(RegistryNames.region(region), descriptor));
    }

    @Override
    public Mono<Void> withdraw(final String region) {
        return Mono.fromRunnable(() -> published.withdraw(region));
    }

    /** Withdraws every region: peers then see this engine with none (its address stays served). */
    @Override
    public Mono<Void> unpublish() {
        return Mono.fromRunnable(() -> published.snapshot().regions().keySet().forEach(published::withdraw));
    }

    /**
     * Fetches the peer's descriptors from the base URL configured for {@code engineName}.
     *
     * @return the entry; empty for a name without a URL, or a peer that does not answer or answers 404
     */
    @Override
    public Mono<RegisteredEngine> lookup(final String engineName) {
        final String url = peers.get(engineName);
        if (url == null) {
            return Mono.empty();
        }
        return fetcher.fetch(url)
                .map(found ->
                        new RegisteredEngine(engineName, found.generation(), found.mainAddress(), found.regions()))
                .onErrorResume(WebClientRequestException.class, e -> Mono.empty())
                .onErrorResume(WebClientResponseException.NotFound.class, e -> Mono.empty());
    }

    @Override
    public Flux<RegistryChange> watch() {
        return RegistryPolling.watch(
                        () -> Flux.fromIterable(peers.keySet())
                                .flatMap(this::lookup)
                                .collectMap(RegisteredEngine::name)
                                .map(TreeMap::new),
                        watchInterval,
                        "the HTTP peers " + peers.keySet())
                .takeUntilOther(closing.asMono().then(Mono.just(true)));
    }

    /** Completes the watches; the web client and the endpoint belong to the application context. */
    @Override
    public void close() {
        closing.tryEmitEmpty();
    }
}
