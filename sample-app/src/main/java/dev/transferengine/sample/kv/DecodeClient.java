package dev.transferengine.sample.kv;

import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/** Prefill's HTTP client for a decode node's {@code /kv} API. */
public final class DecodeClient {

    private final WebClient web;

    /**
     * @param web a client with JSON codecs
     */
    public DecodeClient(final WebClient web) {
        this.web = web;
    }

    /**
     * Fetches the descriptor of decode's page pool.
     *
     * @param decode the decode node's base URL
     * @return its page pool's descriptor
     */
    public Mono<KvDescriptor> descriptor(final String decode) {
        return web.get().uri(decode + "/kv/descriptor").retrieve().bodyToMono(KvDescriptor.class);
    }

    /**
     * Opens a transfer session on decode.
     *
     * @param decode the decode node's base URL
     * @param pages  pages per layer
     * @return the session decode opened
     */
    public Mono<KvSessionGrant> open(final String decode, final int pages) {
        return open(decode, new KvSessionRequest(pages));
    }

    /**
     * Opens a transfer session on decode; with a {@code source}, decode pulls the pages from it.
     *
     * @param decode  the decode node's base URL
     * @param request pages per layer, and prefill's cache descriptor for a pull session
     * @return the session decode opened
     */
    public Mono<KvSessionGrant> open(final String decode, final KvSessionRequest request) {
        return web.post()
                .uri(decode + "/kv/sessions")
                .bodyValue(request)
                .retrieve()
                .bodyToMono(KvSessionGrant.class);
    }

    /**
     * Asks decode to check the session's layers against prefill's checksums.
     *
     * @param decode  the decode node's base URL
     * @param id      the session
     * @param request prefill's checksums
     * @return decode's receipt, once every layer arrived
     */
    public Mono<KvReceipt> verify(final String decode, final String id, final KvVerifyRequest request) {
        return web.post()
                .uri(decode + "/kv/sessions/{id}/verify", id)
                .bodyValue(request)
                .retrieve()
                .bodyToMono(KvReceipt.class);
    }
}
