package dev.transferengine.autoconfigure.jackson;

import dev.transferengine.RegionDescriptor;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.JacksonModule;

/**
 * Auto-configuration of the {@link TransferEngineJacksonModule}; Spring Boot adds every {@link JacksonModule} bean
 * to its {@code JsonMapper}, so controllers and {@code WebClient}s read and write descriptors as text.
 */
@AutoConfiguration(beforeName = "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration")
@ConditionalOnClass({RegionDescriptor.class, JacksonModule.class})
public final class TransferEngineJacksonAutoConfiguration {

    TransferEngineJacksonAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean
    TransferEngineJacksonModule transferEngineJacksonModule() {
        return new TransferEngineJacksonModule();
    }
}
