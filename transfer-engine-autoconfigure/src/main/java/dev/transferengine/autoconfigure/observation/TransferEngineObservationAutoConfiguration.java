package dev.transferengine.autoconfigure.observation;

import dev.transferengine.autoconfigure.ReactiveTransferEngineAutoConfiguration;
import dev.transferengine.reactive.ReactiveTransferEngine;
import dev.transferengine.reactive.TransferObserver;

import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of a {@link TransferObserver} that opens an Observation per write, send and imm wait of the
 * auto-configured {@link ReactiveTransferEngine}, present when an {@link ObservationRegistry} bean exists. A
 * {@link TransferObservationConvention} bean replaces the default names and tags.
 */
@AutoConfiguration(
        before = ReactiveTransferEngineAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass({ObservationRegistry.class, ReactiveTransferEngine.class})
@ConditionalOnBean(ObservationRegistry.class)
public final class TransferEngineObservationAutoConfiguration {

    TransferEngineObservationAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    TransferObserver transferEngineObserver(
            final ObservationRegistry observationRegistry,
            final ObjectProvider<TransferObservationConvention> convention) {
        return new ObservationTransferObserver(observationRegistry, convention.getIfAvailable());
    }

    /** With Micrometer's meter handler the observation is also a timer; these give it its HELP texts. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterFilter.class)
    static final class ObservationMeterDescriptions {

        @Bean
        MeterFilter transferEngineObservationDescriptions() {
            return new TransferObservationMeterDescriptions();
        }
    }
}
