package dev.transferengine.autoconfigure.exchange;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineProperties;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * Auto-configuration of the descriptor exchange: {@link PublishedRegions} for the application's engine, the
 * endpoint serving them when {@code transfer-engine.exchange.enabled=true} in a WebFlux application, and a
 * {@link DescriptorFetcher} wherever {@code WebClient} is on the class path.
 */
@AutoConfiguration(
        after = TransferEngineAutoConfiguration.class,
        afterName = "org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration")
@ConditionalOnClass({TransferEngine.class, WebClient.class})
@EnableConfigurationProperties(TransferEngineProperties.class)
public final class DescriptorExchangeAutoConfiguration {

    DescriptorExchangeAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    DescriptorFetcher descriptorFetcher(
            final ObjectProvider<WebClient.Builder> builder, final TransferEngineProperties properties) {
        return new DescriptorFetcher(
                builder.getIfAvailable(WebClient::builder),
                properties.getExchange().getPath());
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(TransferEngine.class)
    static final class PublishingConfiguration {

        @Bean
        @ConditionalOnMissingBean
        PublishedRegions publishedRegions(final TransferEngine transferEngine) {
            return new PublishedRegions(transferEngine);
        }

        @Bean
        @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
        @ConditionalOnBooleanProperty("transfer-engine.exchange.enabled")
        RouterFunction<ServerResponse> transferEngineDescriptorRoutes(
                final PublishedRegions publishedRegions, final TransferEngineProperties properties) {
            return DescriptorExchangeRoutes.of(properties.getExchange().getPath(), publishedRegions);
        }
    }
}
