package dev.transferengine.autoconfigure;

import dev.transferengine.TransferEngine;
import dev.transferengine.reactive.ReactiveTransferEngine;
import dev.transferengine.reactive.TransferObserver;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

/**
 * Auto-configuration of a {@link ReactiveTransferEngine} over the application's {@link TransferEngine}, with the
 * imm timeout and receive pool from {@code transfer-engine.*} properties, its transfers observed by the
 * {@link TransferObserver} bean if there is one (see
 * {@link dev.transferengine.autoconfigure.observation.TransferEngineObservationAutoConfiguration}). An application with several engines (or
 * one engine marked primary among them) builds its own facades.
 */
@AutoConfiguration(after = TransferEngineAutoConfiguration.class)
@ConditionalOnClass({ReactiveTransferEngine.class, Mono.class})
@ConditionalOnSingleCandidate(TransferEngine.class)
@EnableConfigurationProperties(TransferEngineProperties.class)
public final class ReactiveTransferEngineAutoConfiguration {

    ReactiveTransferEngineAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    ReactiveTransferEngine reactiveTransferEngine(
            final TransferEngine transferEngine,
            final TransferEngineProperties properties,
            final ObjectProvider<TransferObserver> observer) {
        return new ReactiveTransferEngine(
                transferEngine,
                new TransferEnginePropertiesMapper(properties).reactiveOptions(),
                observer.getIfUnique(() -> TransferObserver.NONE));
    }
}
