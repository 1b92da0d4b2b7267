package dev.transferengine.autoconfigure.exchange;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineProperties;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
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

    /**
     * Through the application's {@code WebClient.Builder} (spring-boot-starter-webclient: trace context, Boot's
     * codecs and customizers) where there is one; otherwise through a plain client whose JSON codec knows the
     * descriptor types, so that a WebFlux application without that starter fetches too.
     */
    @Bean
    @ConditionalOnMissingBean
    DescriptorFetcher descriptorFetcher(
            final ObjectProvider<WebClient.Builder> builder,
            final ApplicationContext context,
            final TransferEngineProperties properties) {
        final WebClient.@Nullable Builder applications = builder.getIfAvailable();
        return new DescriptorFetcher(
                applications != null ? applications : DescriptorClients.plain(context),
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
