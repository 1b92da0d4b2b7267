package dev.transferengine.autoconfigure.health;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineSecurity;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.CompositeHealthContributorConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of a {@link TransferEngineHealthIndicator} for every engine of the application, present when
 * Spring Boot's health module is, and switched off with {@code management.health.transferengine.enabled=false}.
 * One engine is the health component {@code transferEngine}; several are its members, by bean name
 * ({@code transferEngine/prefillEngine}).
 */
@AutoConfiguration(after = TransferEngineAutoConfiguration.class)
@ConditionalOnClass({TransferEngine.class, ConditionalOnEnabledHealthIndicator.class})
@ConditionalOnBean(TransferEngine.class)
@ConditionalOnEnabledHealthIndicator("transferengine")
public final class TransferEngineHealthContributorAutoConfiguration
        extends CompositeHealthContributorConfiguration<TransferEngineHealthIndicator, TransferEngine> {

    TransferEngineHealthContributorAutoConfiguration(final ObjectProvider<TransferEngineSecurity> security) {
        super(engine -> new TransferEngineHealthIndicator(
                engine,
                security.stream()
                        .filter(described -> described.describes(engine))
                        .findFirst()
                        .orElse(null)));
    }

    @Bean
    @ConditionalOnMissingBean(name = {"transferEngineHealthIndicator", "transferEngineHealthContributor"})
    HealthContributor transferEngineHealthContributor(final ConfigurableListableBeanFactory beanFactory) {
        return createContributor(beanFactory, TransferEngine.class);
    }
}
