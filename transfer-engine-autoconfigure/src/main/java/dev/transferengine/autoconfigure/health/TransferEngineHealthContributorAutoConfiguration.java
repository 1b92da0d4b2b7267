package dev.transferengine.autoconfigure.health;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@link TransferEngineHealthIndicator}, present when Spring Boot's health module is,
 * and switched off with {@code management.health.transferengine.enabled=false}.
 */
@AutoConfiguration(after = TransferEngineAutoConfiguration.class)
@ConditionalOnClass({ TransferEngine.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(TransferEngine.class)
@ConditionalOnEnabledHealthIndicator("transferengine")
public final class TransferEngineHealthContributorAutoConfiguration {

    TransferEngineHealthContributorAutoConfiguration() {
    }

    @Bean
    @ConditionalOnMissingBean(name = "transferEngineHealthIndicator")
    TransferEngineHealthIndicator transferEngineHealthIndicator(final TransferEngine transferEngine) {
        return new TransferEngineHealthIndicator(transferEngine);
    }
}
