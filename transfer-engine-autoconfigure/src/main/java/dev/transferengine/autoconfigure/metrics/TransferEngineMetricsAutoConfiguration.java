package dev.transferengine.autoconfigure.metrics;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.ReactiveTransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineProperties;
import dev.transferengine.reactive.ReactiveTransferEngine;

import java.util.Map;

import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@link TransferEngineMeterBinder} over every engine of the application, present when
 * Micrometer is; Spring Boot binds it to the meter registry.
 */
@AutoConfiguration(
        after = {TransferEngineAutoConfiguration.class, ReactiveTransferEngineAutoConfiguration.class},
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass({TransferEngine.class, MeterBinder.class})
@ConditionalOnBean(TransferEngine.class)
@EnableConfigurationProperties(TransferEngineProperties.class)
public final class TransferEngineMetricsAutoConfiguration {

    TransferEngineMetricsAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    TransferEngineMeterBinder transferEngineMeterBinder(
            final Map<String, TransferEngine> transferEngines,
            final Map<String, ReactiveTransferEngine> reactives,
            final TransferEngineProperties properties) {
        final TransferEngineProperties.Metrics metrics = properties.getMetrics();
        return new TransferEngineMeterBinder(
                transferEngines, reactives, metrics.getLatencySlo(), metrics.getMaxPeerTags());
    }
}
