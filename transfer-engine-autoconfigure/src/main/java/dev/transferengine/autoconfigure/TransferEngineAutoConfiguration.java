package dev.transferengine.autoconfigure;

import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of a {@link TransferEngine} from {@code transfer-engine.*} properties, closed on shutdown
 * after its in-flight work drained. An engine bean of the application's own wins, and then the application also
 * owns its closing.
 */
@AutoConfiguration(afterName = "org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration")
@ConditionalOnClass(TransferEngine.class)
@EnableConfigurationProperties(TransferEngineProperties.class)
public final class TransferEngineAutoConfiguration {

    /** Checks the environment variables first: a typo there must fail start-up like one in a file. */
    TransferEngineAutoConfiguration(final Environment environment) {
        TransferEngineEnvironmentVariables.check(environment);
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(TransferEngine.class)
    static final class EngineConfiguration {

        /** Closed by {@link TransferEngineLifecycle}, hence no destroy method of its own. */
        @Bean(destroyMethod = "")
        TransferEngine transferEngine(
                final TransferEngineProperties properties,
                final ObjectProvider<TransferEngineBuilderCustomizer> customizers,
                final ObjectProvider<SslBundles> sslBundles) {
            final TransferEngineBuilder builder = TransferEngine.builder();
            final TransferEnginePropertiesMapper mapper = new TransferEnginePropertiesMapper(properties);
            mapper.applyTo(builder);
            mapper.applyTls(builder, sslBundles.getIfAvailable());
            customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
            return builder.build();
        }

        @Bean
        TransferEngineLifecycle transferEngineLifecycle(final TransferEngine transferEngine) {
            return new TransferEngineLifecycle(transferEngine);
        }
    }
}
