package dev.transferengine.sample;

import org.springframework.boot.http.client.autoconfigure.reactive.ClientHttpConnectorBuilderCustomizer;
import org.springframework.boot.http.client.reactive.ReactorClientHttpConnectorBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The HTTP client the nodes use to reach each other's APIs. */
@Configuration(proxyBeanMethods = false)
class PeerHttpConfiguration {

    /**
     * Caps how long peers' DNS answers are cached. Netty's resolver otherwise keeps them for the record's TTL, and a
     * decode node that was replaced under the same name (a new container, a rescheduled pod) would stay unreachable.
     */
    @Bean
    ClientHttpConnectorBuilderCustomizer<ReactorClientHttpConnectorBuilder> peerDnsTtl(
            final SampleProperties properties) {
        return builder -> builder.withHttpClientCustomizer(client -> client.resolver(spec ->
                spec.cacheMaxTimeToLive(properties.peerDnsTtl()).cacheNegativeTimeToLive(properties.peerDnsTtl())));
    }
}
