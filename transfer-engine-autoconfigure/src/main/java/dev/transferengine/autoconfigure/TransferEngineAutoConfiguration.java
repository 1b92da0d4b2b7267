package dev.transferengine.autoconfigure;

import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NativeDetector;
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

    private static final Logger LOG = LoggerFactory.getLogger(TransferEngineAutoConfiguration.class);

    /** The auto-configured engine's bean name, as its factory method names it. */
    private static final String BEAN_NAME = "transferEngine";

    /** Checks the environment variables first: a typo there must fail start-up like one in a file. */
    TransferEngineAutoConfiguration(final Environment environment) {
        requireJvm(NativeDetector.inNativeImage());
        TransferEngineEnvironmentVariables.check(environment);
    }

    /**
     * The starter is JVM-only: the engine binds native libraries through the FFM API at run time and uses Agrona's
     * and JCTools' Unsafe-based queues, for which there are no GraalVM reachability hints; a native image would fail
     * later and obscurely, so it fails here and says why.
     *
     * @throws IllegalStateException in a native image
     */
    static void requireJvm(final boolean inNativeImage) {
        if (inNativeImage) {
            throw new IllegalStateException("transfer-engine runs on the JVM only, not in a GraalVM native image: the"
                    + " engine binds libfabric, CUDA and libc through the FFM API at run time and uses Agrona and"
                    + " JCTools queues, for which it ships no reachability metadata. Build the application as a jar"
                    + " (or a jlink'ed runtime) and run it with --enable-native-access=ALL-UNNAMED.");
        }
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

        /** Also writes the start-up line that names the bean: an application may hold several engines. */
        @Bean
        TransferEngineSecurity transferEngineSecurity(
                final TransferEngine transferEngine,
                final TransferEngineProperties properties,
                final ObjectProvider<SslBundles> sslBundles) {
            final TransferEngineSecurity security =
                    TransferEngineSecurity.of(transferEngine, properties, sslBundles.getIfAvailable());
            int nics = 0;
            for (int g = 0; g < transferEngine.groupCount(); g++) {
                nics += transferEngine.nicCount(g);
            }
            LOG.info(
                    "transfer engine '{}' up: transport {}, {} group(s), {} NIC(s), {}, main address {}",
                    BEAN_NAME,
                    transferEngine.transport(),
                    transferEngine.groupCount(),
                    nics,
                    security,
                    transferEngine.mainAddress().describe());
            return security;
        }

        @Bean
        TransferEngineLifecycle transferEngineLifecycle(final TransferEngine transferEngine) {
            return new TransferEngineLifecycle(BEAN_NAME, transferEngine);
        }
    }
}
