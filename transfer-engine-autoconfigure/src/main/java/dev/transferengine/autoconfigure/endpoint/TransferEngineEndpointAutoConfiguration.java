package dev.transferengine.autoconfigure.endpoint;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineSecurity;

import java.util.Map;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@link TransferEngineEndpoint}, present with Spring Boot's actuator and available once
 * exposed, e.g. {@code management.endpoints.web.exposure.include=transferengine}.
 */
@AutoConfiguration(after = TransferEngineAutoConfiguration.class)
@ConditionalOnClass({TransferEngine.class, Endpoint.class, ConditionalOnAvailableEndpoint.class})
@ConditionalOnBean(TransferEngine.class)
@ConditionalOnAvailableEndpoint(TransferEngineEndpoint.class)
public final class TransferEngineEndpointAutoConfiguration {

    TransferEngineEndpointAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    TransferEngineEndpoint transferEngineEndpoint(
            final Map<String, TransferEngine> transferEngines, final ObjectProvider<TransferEngineSecurity> security) {
        return new TransferEngineEndpoint(transferEngines, security.stream().toList());
    }
}
