package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.TransferEngine;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.Objects;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * The main class of a child JVM that runs an engine and publishes one region in a Redis registry under a lease,
 * then prints {@value #PUBLISHED} and the generation and keeps renewing until its standard input ends or it is
 * killed; {@link RedisRegistryKilledProcessTests} kills it.
 */
final class RegistryPeerProcess {

    static final String PUBLISHED = "published ";

    private RegistryPeerProcess() {}

    /**
     * @param args Redis port, key prefix, engine name, lease in milliseconds
     */
    static void main(final String[] args) throws IOException {
        final LettuceConnectionFactory connections =
                new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", Integer.parseInt(args[0])));
        connections.afterPropertiesSet();
        try (TransferEngine engine = TransferEngine.builder()
                        .transport("tcp")
                        .bindAddress("127.0.0.1")
                        .build();
                Arena arena = Arena.ofShared();
                RedisDescriptorRegistry registry = new RedisDescriptorRegistry(
                        new ReactiveStringRedisTemplate(connections),
                        args[1],
                        args[2],
                        engine.mainAddress(),
                        Duration.ofMillis(Long.parseLong(args[3])),
                        Duration.ofMillis(100))) {
            final MemoryRegion region = engine.register(arena.allocate(4096, 4096), Device.host());
            registry.publish("kv-pool", region).block(Duration.ofSeconds(60));
            final RegisteredEngine published =
                    Objects.requireNonNull(registry.lookup(args[2]).block(Duration.ofSeconds(60)));
            System.out.println(PUBLISHED + published.generation());
            System.out.flush();
            // runs until the parent closes our input (or kills us, which is the point)
            while (System.in.read() >= 0) {
                // nothing to read; the lease is renewed in the background
            }
        } finally {
            connections.destroy();
        }
    }
}
