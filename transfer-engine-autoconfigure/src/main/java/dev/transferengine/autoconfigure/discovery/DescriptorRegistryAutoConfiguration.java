package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.autoconfigure.InvalidTransferEnginePropertyException;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineProperties;
import dev.transferengine.autoconfigure.exchange.DescriptorExchangeAutoConfiguration;
import dev.transferengine.autoconfigure.exchange.DescriptorFetcher;
import dev.transferengine.autoconfigure.exchange.PublishedRegions;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Discovery chosen by {@code transfer-engine.discovery.type}: the {@link HttpDescriptorRegistry} for {@code http},
 * the Redis one from {@link RedisDescriptorRegistryAutoConfiguration} for {@code redis}, and for either the
 * lifecycle that announces the engine at start-up and removes it at shutdown. Another type, or a type whose
 * registry cannot be made here, fails start-up naming what to add.
 */
@AutoConfiguration(
        after = {
            TransferEngineAutoConfiguration.class,
            DescriptorExchangeAutoConfiguration.class,
            RedisDescriptorRegistryAutoConfiguration.class
        })
@ConditionalOnExpression("!'${" + DescriptorRegistryAutoConfiguration.TYPE + ":none}'.equalsIgnoreCase('none')")
@EnableConfigurationProperties(TransferEngineProperties.class)
public final class DescriptorRegistryAutoConfiguration {

    /** The property that picks the registry. */
    static final String TYPE = "transfer-engine.discovery.type";

    private static final Set<String> TYPES = Set.of("none", "http", "redis");

    /** How long start-up waits for the announcement. */
    private static final Duration WAIT = Duration.ofSeconds(30);

    DescriptorRegistryAutoConfiguration() {}

    @Bean
    DescriptorRegistryLifecycle descriptorRegistryLifecycle(
            final ObjectProvider<DescriptorRegistry> registry, final TransferEngineProperties properties) {
        final String type = properties.getDiscovery().getType().toLowerCase(Locale.ROOT);
        if (!TYPES.contains(type)) {
            throw new InvalidTransferEnginePropertyException(
                    TYPE, type, "no such registry", "Set " + TYPE + " to none, http or redis.");
        }
        final DescriptorRegistry found = registry.getIfAvailable();
        if (found == null) {
            throw new InvalidTransferEnginePropertyException(
                    TYPE,
                    type,
                    "there is no DescriptorRegistry for it in this application",
                    type.equals("redis")
                            ? "Add org.springframework.boot:spring-boot-starter-data-redis-reactive (it brings Spring"
                                    + " Data Redis and Lettuce, and connects as spring.data.redis.* says)."
                            : "Add org.springframework.boot:spring-boot-starter-webflux and"
                                    + " spring-boot-starter-webclient, and give the application one TransferEngine"
                                    + " bean.");
        }
        return new DescriptorRegistryLifecycle(found, WAIT);
    }

    /**
     * This engine's name: {@code transfer-engine.discovery.name}, or the application's name and a random suffix.
     *
     * @param discovery the discovery settings
     * @param environment where {@code spring.application.name} is read
     * @return the name
     */
    static String engineName(final TransferEngineProperties.Discovery discovery, final Environment environment) {
        final @Nullable String configured = discovery.getName();
        if (configured != null && !configured.isBlank()) {
            return configured;
        }
        final byte[] suffix = new byte[4];
        new SecureRandom().nextBytes(suffix);
        return environment.getProperty("spring.application.name", "transfer-engine") + "-"
                + HexFormat.of().formatHex(suffix);
    }

    /** The registry over the descriptor exchange; the exchange endpoint must be on, or peers would find nothing. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(WebClient.class)
    @ConditionalOnProperty(name = TYPE, havingValue = "http")
    @ConditionalOnBean({PublishedRegions.class, DescriptorFetcher.class})
    static final class HttpRegistryConfiguration {

        @Bean
        @ConditionalOnMissingBean(DescriptorRegistry.class)
        HttpDescriptorRegistry descriptorRegistry(
                final PublishedRegions published,
                final DescriptorFetcher fetcher,
                final TransferEngineProperties properties,
                final Environment environment) {
            if (!properties.getExchange().isEnabled()) {
                throw new InvalidTransferEnginePropertyException(
                        "transfer-engine.exchange.enabled",
                        false,
                        "discovery type http publishes through the descriptor endpoint, which is off",
                        "Set transfer-engine.exchange.enabled=true (in a WebFlux application on a trusted network),"
                                + " or use transfer-engine.discovery.type=redis.");
            }
            final TransferEngineProperties.Discovery discovery = properties.getDiscovery();
            return new HttpDescriptorRegistry(
                    engineName(discovery, environment),
                    published,
                    fetcher,
                    discovery.getHttpPeers(),
                    discovery.getWatchInterval());
        }
    }
}
