package dev.transferengine.autoconfigure;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.observation.ObservationTransferObserver;
import dev.transferengine.reactive.ReactiveTransferEngine;
import dev.transferengine.reactive.TransferObserver;

import java.util.Map;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;
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

    private static final String OBSERVATION_REGISTRY = "io.micrometer.observation.ObservationRegistry";

    ReactiveTransferEngineAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    ReactiveTransferEngine reactiveTransferEngine(
            final TransferEngine transferEngine,
            final Map<String, TransferEngine> engines,
            final TransferEngineProperties properties,
            final ObjectProvider<TransferObserver> observer) {
        TransferObserver chosen = observer.getIfUnique(() -> TransferObserver.NONE);
        // Micrometer's Observation API is optional: touch the observer's class only where it can load
        if (ClassUtils.isPresent(OBSERVATION_REGISTRY, getClass().getClassLoader())) {
            chosen = ObservationTransferObserver.forEngine(chosen, beanName(transferEngine, engines));
        }
        return new ReactiveTransferEngine(
                transferEngine, new TransferEnginePropertiesMapper(properties).reactiveOptions(), chosen);
    }

    @SuppressWarnings("ReferenceEquality") // identity on purpose: which bean is this very engine
    private static String beanName(final TransferEngine engine, final Map<String, TransferEngine> engines) {
        for (final Map.Entry<String, TransferEngine> entry : engines.entrySet()) {
            if (entry.getValue() == engine) {
                return entry.getKey();
            }
        }
        return "transferEngine";
    }
}
