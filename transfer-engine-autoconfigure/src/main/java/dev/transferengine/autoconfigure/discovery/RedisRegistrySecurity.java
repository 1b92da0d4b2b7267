package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.autoconfigure.InvalidTransferEnginePropertyException;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Keeps remote keys inside the cluster: the registry publishes them only to a Redis on loopback, or one reached
 * with a password (an ACL user) and TLS. A remote Redis with neither fails start-up unless
 * {@value #ALLOW_INSECURE} is set; with only one of the two, start-up logs a warning.
 */
final class RedisRegistrySecurity {

    static final String ALLOW_INSECURE = "transfer-engine.discovery.redis-allow-insecure";

    private static final Logger LOG = LoggerFactory.getLogger(RedisRegistrySecurity.class);

    private RedisRegistrySecurity() {}

    /**
     * Checks the connection the registry will use.
     *
     * @throws InvalidTransferEnginePropertyException if it would publish remote keys to a remote Redis in clear and
     *     without authentication, and that was not allowed
     */
    static void check(final ReactiveRedisConnectionFactory factory, final boolean allowInsecure) {
        if (!(factory instanceof LettuceConnectionFactory lettuce)) {
            LOG.warn(
                    "the descriptor registry cannot tell whether {} is protected: make sure the Redis it reaches is"
                            + " on loopback, or uses TLS and an ACL user (spring.data.redis.ssl.enabled,"
                            + " spring.data.redis.username/password)",
                    factory.getClass().getName());
            return;
        }
        final List<String> hosts = hosts(lettuce);
        final List<String> remote =
                hosts.stream().filter(host -> !loopback(host)).toList();
        if (remote.isEmpty()) {
            return;
        }
        final boolean tls = lettuce.getClientConfiguration().isUseSsl();
        final boolean password = lettuce.getPassword() != null;
        if (!tls && !password) {
            if (!allowInsecure) {
                throw new InvalidTransferEnginePropertyException(
                        ALLOW_INSECURE,
                        false,
                        "the descriptor registry would publish remote keys to the Redis at " + remote
                                + ", which is not on loopback and is reached without TLS or a password: whoever"
                                + " reaches it could read them and write into the published regions",
                        "Protect the connection with Spring Boot's properties: spring.data.redis.ssl.enabled=true"
                                + " (or spring.data.redis.ssl.bundle) and spring.data.redis.username/password of an"
                                + " ACL user (docs/spring-boot.md, Discovery); or, on a trusted network only, set "
                                + ALLOW_INSECURE + "=true");
            }
            LOG.warn(
                    "the descriptor registry publishes remote keys to the Redis at {} without TLS or a password"
                            + " ({}=true)",
                    remote,
                    ALLOW_INSECURE);
        } else if (!tls) {
            LOG.warn(
                    "the descriptor registry publishes remote keys to the Redis at {} without TLS: they cross the"
                            + " network in clear (spring.data.redis.ssl.enabled=true encrypts them)",
                    remote);
        } else if (!password) {
            LOG.warn(
                    "the descriptor registry publishes remote keys to the Redis at {} without a password: any"
                            + " client that completes TLS can read them (spring.data.redis.username/password)",
                    remote);
        }
    }

    private static List<String> hosts(final LettuceConnectionFactory lettuce) {
        final List<String> hosts = new ArrayList<>();
        final RedisClusterConfiguration cluster = lettuce.getClusterConfiguration();
        final RedisSentinelConfiguration sentinel = lettuce.getSentinelConfiguration();
        if (lettuce.isClusterAware() && cluster != null) {
            for (final RedisNode node : cluster.getClusterNodes()) {
                add(hosts, node.getHost());
            }
        } else if (lettuce.isRedisSentinelAware() && sentinel != null) {
            for (final RedisNode node : sentinel.getSentinels()) {
                add(hosts, node.getHost());
            }
        } else if (lettuce.getSocketConfiguration() == null) {
            add(hosts, lettuce.getHostName());
        }
        return hosts;
    }

    private static void add(final List<String> hosts, final @Nullable String host) {
        hosts.add(host == null ? "localhost" : host);
    }

    /** Whether every address of {@code host} is a loopback address; a name that does not resolve is not. */
    private static boolean loopback(final String host) {
        try {
            for (final InetAddress address : InetAddress.getAllByName(host)) {
                if (!address.isLoopbackAddress()) {
                    return false;
                }
            }
            return true;
        } catch (final UnknownHostException e) {
            return false;
        }
    }
}
