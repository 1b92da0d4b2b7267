package dev.transferengine.autoconfigure.exchange;

import dev.transferengine.RegionDescriptor;

import java.util.NoSuchElementException;

import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * Reads what another service publishes at its descriptor endpoint ({@code transfer-engine.exchange.path} there).
 * Cold: each subscription makes one request. The auto-configured one runs through the application's
 * {@code WebClient.Builder} where there is one (spring-boot-starter-webclient), so the request carries the caller's
 * trace context; without one it uses a plain client whose JSON codec knows the descriptor types.
 */
public final class DescriptorFetcher {

    private final WebClient client;
    private final String path;

    /**
     * A fetcher of descriptor endpoints at one path.
     *
     * @param builder the web client to fetch with (it is cloned, so the caller's builder is untouched)
     * @param path    the path of the descriptor endpoint on every peer, e.g. {@code /transfer-engine/descriptors}
     */
    public DescriptorFetcher(final WebClient.Builder builder, final String path) {
        this.client = builder.clone().build();
        this.path = path;
    }

    /**
     * Everything the service at {@code baseUrl} publishes.
     *
     * @param baseUrl the service's scheme, host and port, e.g. {@code http://10.0.0.2:8080}
     * @return a cold {@code Mono} of its main address and descriptors; fails with the {@code WebClient}'s error
     */
    public Mono<ServiceDescriptors> fetch(final String baseUrl) {
        return client.get().uri(baseUrl + path).retrieve().bodyToMono(ServiceDescriptors.class);
    }

    /**
     * The region the service at {@code baseUrl} publishes under {@code name}; fails with
     * {@link NoSuchElementException} when it publishes none by that name.
     *
     * @param baseUrl the service's scheme, host and port, e.g. {@code http://10.0.0.2:8080}
     * @param name the name the region is published under
     * @return a cold {@code Mono} of the descriptor
     */
    public Mono<RegionDescriptor> fetch(final String baseUrl, final String name) {
        return client.get()
                .uri(baseUrl + path + "/{name}", name)
                .retrieve()
                .onStatus(
                        status -> status.value() == HttpStatus.NOT_FOUND.value(),
                        response -> Mono.error(new NoSuchElementException(
                                "the service at " + baseUrl + " publishes no region '" + name + "'")))
                .bodyToMono(RegionDescriptor.class);
    }
}
