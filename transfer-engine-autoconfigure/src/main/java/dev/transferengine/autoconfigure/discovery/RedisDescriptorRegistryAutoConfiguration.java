package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.TransferEngineAutoConfiguration;
import dev.transferengine.autoconfigure.TransferEngineProperties;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * With {@code transfer-engine.discovery.type=redis} and Spring Data Redis on the class path
 * (spring-boot-starter-data-redis-reactive): a {@link RedisDescriptorRegistry} over Boot's
 * {@code ReactiveRedisConnectionFactory}, so it connects as {@code spring.data.redis.*} says (host, ACL user,
 * password, TLS). It refuses a remote Redis reached without TLS or a password, see {@link RedisRegistrySecurity}.
 */
@AutoConfiguration(
        after = TransferEngineAutoConfiguration.class,
        afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration")
@ConditionalOnClass({TransferEngine.class, ReactiveStringRedisTemplate.class})
@ConditionalOnProperty(name = DescriptorRegistryAutoConfiguration.TYPE, havingValue = "redis")
@EnableConfigurationProperties(TransferEngineProperties.class)
public final class RedisDescriptorRegistryAutoConfiguration {

    RedisDescriptorRegistryAutoConfiguration() {}

    @Bean
    @ConditionalOnMissingBean(DescriptorRegistry.class)
    @ConditionalOnSingleCandidate(TransferEngine.class)
    RedisDescriptorRegistry descriptorRegistry(
            final ObjectProvider<ReactiveRedisConnectionFactory> connections,
            final TransferEngine transferEngine,
            final TransferEngineProperties properties,
            final Environment environment) {
        final ReactiveRedisConnectionFactory connection = connections.getIfAvailable();
        if (connection == null) {
            throw new IllegalStateException("transfer-engine.discovery.type=redis needs a"
                    + " ReactiveRedisConnectionFactory bean: add org.springframework.boot:"
                    + "spring-boot-starter-data-redis-reactive, which makes one from spring.data.redis.*");
        }
        final TransferEngineProperties.Discovery discovery = properties.getDiscovery();
        RedisRegistrySecurity.check(connection, discovery.isRedisAllowInsecure());
        return new RedisDescriptorRegistry(
                new ReactiveStringRedisTemplate(connection),
                discovery.getRedisKeyPrefix(),
                DescriptorRegistryAutoConfiguration.engineName(discovery, environment),
                transferEngine.mainAddress(),
                discovery.getLease(),
                discovery.getWatchInterval());
    }
}
