package dev.transferengine.sample.moe;

import dev.transferengine.TransferEngine;
import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.Role;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The {@code moe} role's node. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnRole(Role.MOE)
@EnableConfigurationProperties(MoeProperties.class)
class MoeConfiguration {

    @Bean
    MoeNode moeNode(final TransferEngine transferEngine, final MoeProperties properties, final MeterRegistry registry) {
        return new MoeNode(transferEngine, properties, registry);
    }
}
