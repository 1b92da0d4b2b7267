package dev.transferengine.autoconfigure.metrics;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.ReactiveTransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.reactive.ReactiveTransferEngine;

import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@link TransferEngineMeterBinder}, present when Micrometer is; Spring Boot binds it to
 * every meter registry.
 */
@AutoConfiguration(after = { TransferEngineAutoConfiguration.class, ReactiveTransferEngineAutoConfiguration.class },
    afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass({ TransferEngine.class, MeterBinder.class })
@ConditionalOnBean(TransferEngine.class)
public final class TransferEngineMetricsAutoConfiguration {

    TransferEngineMetricsAutoConfiguration() {
    }

    @Bean
    @ConditionalOnMissingBean
    TransferEngineMeterBinder transferEngineMeterBinder(final TransferEngine transferEngine,
                                                        final ObjectProvider<ReactiveTransferEngine> reactive) {
        return new TransferEngineMeterBinder(transferEngine, reactive.getIfUnique());
    }
}
