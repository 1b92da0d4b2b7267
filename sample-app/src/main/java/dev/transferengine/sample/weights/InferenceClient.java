package dev.transferengine.sample.weights;

import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/** The trainer's HTTP client for an inference node's {@code /weights} API. */
public final class InferenceClient {

    private final WebClient web;

    /**
     * @param web a client with JSON codecs
     */
    public InferenceClient(final WebClient web) {
        this.web = web;
    }

    /**
     * Fetches the descriptor of the node's destination buffer.
     *
     * @param node the inference node's base URL
     * @return its destination buffer's descriptor
     */
    public Mono<WeightsDescriptor> descriptor(final String node) {
        return web.get().uri(node + "/weights/descriptor").retrieve().bodyToMono(WeightsDescriptor.class);
    }

    /**
     * Tells the node which push to expect, so that it arms its barrier.
     *
     * @param node        the inference node's base URL
     * @param expectation the coming push
     * @return completes once the node armed its barrier expectation
     */
    public Mono<Void> expect(final String node, final WeightsExpectation expectation) {
        return web.post()
                .uri(node + "/weights/expect")
                .bodyValue(expectation)
                .retrieve()
                .toBodilessEntity()
                .then();
    }

    /**
     * Asks the node to check the tensors of a push.
     *
     * @param node    the inference node's base URL
     * @param version the push
     * @return the node's receipt, once the barrier arrived and the tensors were checked
     */
    public Mono<InferenceReceipt> verification(final String node, final long version) {
        return web.get()
                .uri(node + "/weights/verification?version={version}", version)
                .retrieve()
                .bodyToMono(InferenceReceipt.class);
    }
}
