package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;
import dev.transferengine.autoconfigure.discovery.RegistryChange.Kind;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Redis registry against a real redis-server: leases, generations, watches, and an ACL user. */
class RedisDescriptorRegistryTests {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration LONG_LEASE = Duration.ofMinutes(5);
    private static final Duration SHORT_LEASE = Duration.ofSeconds(1);
    private static final Duration POLL = Duration.ofMillis(100);

    private static RedisServer redis;

    private final String prefix = "te-test-" + UUID.randomUUID() + ":";
    private final List<AutoCloseable> open = new ArrayList<>();
    private final Arena arena = Arena.ofShared();

    @BeforeAll
    static void startRedis() throws IOException {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @AfterEach
    void closeEverything() throws Exception {
        for (final AutoCloseable closeable : open.reversed()) {
            closeable.close();
        }
        arena.close();
    }

    @Test
    void aPublishedRegionIsFoundByNameWithTheEngineAddressAndAGeneration() {
        final TransferEngine engine = engine();
        final MemoryRegion region = region(engine);
        final RedisDescriptorRegistry registry = registry("decode-0", engine, LONG_LEASE);

        registry.publish("kv-pool", region).block(WAIT);

        final RegisteredEngine found = Objects.requireNonNull(
                registry("prefill-0", engine(), LONG_LEASE).lookup("decode-0").block(WAIT));
        assertThat(found.name()).isEqualTo("decode-0");
        assertThat(found.mainAddress()).isEqualTo(engine.mainAddress());
        assertThat(found.region("kv-pool")).isEqualTo(region.descriptor());
        assertThat(found.generation()).isPositive();
        assertThat(found.toString()).doesNotContain(region.descriptor().toText());
        StepVerifier.create(registry.lookup("nobody")).expectComplete().verify(WAIT);
    }

    @Test
    void aRekeyedRegionPublishedAgainComesWithANewGenerationAndTheNewKey() {
        final TransferEngine engine = engine();
        final MemoryRegion region = region(engine);
        final RedisDescriptorRegistry registry = registry("decode-0", engine, LONG_LEASE);
        registry.publish("kv-pool", region).block(WAIT);
        final RegisteredEngine before =
                Objects.requireNonNull(registry.lookup("decode-0").block(WAIT));

        final RegionDescriptor rekeyed = region.rekey();
        registry.publish("kv-pool", region).block(WAIT);

        final RegisteredEngine after =
                Objects.requireNonNull(registry.lookup("decode-0").block(WAIT));
        assertThat(after.generation()).isGreaterThan(before.generation());
        assertThat(after.region("kv-pool")).isEqualTo(rekeyed).isNotEqualTo(before.region("kv-pool"));
    }

    @Test
    void aWatchReportsAnEngineAsItAppearsChangesAndVanishes() {
        final TransferEngine engine = engine();
        final RedisDescriptorRegistry decode = registry("decode-0", engine, LONG_LEASE);
        final RedisDescriptorRegistry watcher = registry("watcher", engine(), LONG_LEASE);

        StepVerifier.create(watcher.watch())
                .then(() -> decode.publish("kv-pool", region(engine)).block(WAIT))
                .assertNext(change -> {
                    assertThat(change.kind()).isEqualTo(Kind.APPEARED);
                    assertThat(change.name()).isEqualTo("decode-0");
                    assertThat(change.engine().regions()).containsOnlyKeys("kv-pool");
                })
                .then(() -> decode.publish("weights", region(engine)).block(WAIT))
                .assertNext(change -> {
                    assertThat(change.kind()).isEqualTo(Kind.CHANGED);
                    assertThat(change.engine().regions()).containsOnlyKeys("kv-pool", "weights");
                })
                .then(() -> decode.unpublish().block(WAIT))
                .assertNext(change -> {
                    assertThat(change.kind()).isEqualTo(Kind.VANISHED);
                    assertThat(change.name()).isEqualTo("decode-0");
                })
                .thenCancel()
                .verify(WAIT);
    }

    @Test
    void anEngineKilledWithoutUnpublishingVanishesWhenItsLeaseRunsOut() {
        final TransferEngine engine = engine();
        final RedisDescriptorRegistry decode = registry("decode-0", engine, SHORT_LEASE);
        final RedisDescriptorRegistry watcher = registry("watcher", engine(), LONG_LEASE);
        decode.publish("kv-pool", region(engine)).block(WAIT);

        StepVerifier.create(watcher.watch().filter(change -> change.name().equals("decode-0")))
                .assertNext(change -> assertThat(change.kind()).isEqualTo(Kind.APPEARED))
                .then(() -> {
                    decode.close(); // no unpublish: nothing renews the entry any more
                    engine.close();
                })
                .assertNext(change -> assertThat(change.kind()).isEqualTo(Kind.VANISHED))
                .thenCancel()
                .verify(WAIT);
        StepVerifier.create(watcher.lookup("decode-0")).expectComplete().verify(WAIT);
    }

    @Test
    void anEngineRestartedUnderTheSameNameComesBackWithANewGenerationAndAddress() {
        final TransferEngine first = engine();
        final RedisDescriptorRegistry before = registry("decode-0", first, LONG_LEASE);
        before.publish("kv-pool", region(first)).block(WAIT);
        final RedisDescriptorRegistry watcher = registry("watcher", engine(), LONG_LEASE);

        StepVerifier.create(watcher.watch().filter(change -> change.name().equals("decode-0")))
                .assertNext(change -> assertThat(change.kind()).isEqualTo(Kind.APPEARED))
                .then(() -> {
                    before.close(); // killed: its entry stays until the lease runs out, or a restart replaces it
                    first.close();
                    final TransferEngine second = engine();
                    registry("decode-0", second, LONG_LEASE)
                            .publish("kv-pool", region(second))
                            .block(WAIT);
                })
                .assertNext(change -> {
                    assertThat(change.kind()).isEqualTo(Kind.CHANGED);
                    assertThat(change.engine().mainAddress()).isNotEqualTo(first.mainAddress());
                })
                .thenCancel()
                .verify(WAIT);
        final long restarted =
                Objects.requireNonNull(watcher.lookup("decode-0").block(WAIT)).generation();
        assertThat(restarted).isGreaterThan(1);
    }

    @Test
    void anAclUserWithTheDocumentedRightsPublishesLooksUpAndWatches() throws IOException {
        try (RedisServer protectedRedis = RedisServer.start(
                "user default off",
                "user te-engine on >te-secret ~transfer-engine:* +@connection +get +set +del +incr +pexpire +mget"
                        + " +scan +eval +evalsha")) {
            final RedisStandaloneConfiguration config =
                    new RedisStandaloneConfiguration("127.0.0.1", protectedRedis.port());
            config.setUsername("te-engine");
            config.setPassword(RedisPassword.of("te-secret"));
            final ReactiveStringRedisTemplate template = template(config);
            final TransferEngine engine = engine();
            final RedisDescriptorRegistry registry = track(new RedisDescriptorRegistry(
                    template, "transfer-engine:", "decode-0", engine.mainAddress(), LONG_LEASE, POLL));

            StepVerifier.create(registry.watch())
                    .then(() -> registry.publish("kv-pool", region(engine)).block(WAIT))
                    .assertNext(change -> assertThat(change.kind()).isEqualTo(Kind.APPEARED))
                    .thenCancel()
                    .verify(WAIT);
            assertThat(Objects.requireNonNull(registry.lookup("decode-0").block(WAIT))
                            .mainAddress())
                    .isEqualTo(engine.mainAddress());

            final RedisStandaloneConfiguration anonymous =
                    new RedisStandaloneConfiguration("127.0.0.1", protectedRedis.port());
            final RedisDescriptorRegistry stranger = track(new RedisDescriptorRegistry(
                    template(anonymous), "transfer-engine:", "stranger", engine.mainAddress(), LONG_LEASE, POLL));
            assertThatThrownBy(() -> stranger.lookup("decode-0").block(WAIT)).hasStackTraceContaining("NOAUTH");
        }
    }

    @Test
    void aWatchCompletesWhenItsRegistryCloses() {
        final RedisDescriptorRegistry watcher = registry("watcher", engine(), LONG_LEASE);

        StepVerifier.create(watcher.watch())
                .then(watcher::close)
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void badNamesAndLeasesAreRefusedNamingTheRule() {
        final TransferEngine engine = engine();
        assertThatThrownBy(() -> registry("decode 0", engine, LONG_LEASE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'decode 0'");
        assertThatThrownBy(() -> registry("decode-0", engine, Duration.ofMillis(10)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least");
        final RedisDescriptorRegistry registry = registry("decode-0", engine, LONG_LEASE);
        StepVerifier.create(registry.publish("kv/pool", region(engine)))
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("'kv/pool'"))
                .verify(WAIT);
    }

    private RedisDescriptorRegistry registry(final String name, final TransferEngine engine, final Duration lease) {
        return track(new RedisDescriptorRegistry(
                template(new RedisStandaloneConfiguration("127.0.0.1", redis.port())),
                prefix,
                name,
                engine.mainAddress(),
                lease,
                POLL));
    }

    private ReactiveStringRedisTemplate template(final RedisStandaloneConfiguration config) {
        final LettuceConnectionFactory connections = new LettuceConnectionFactory(config);
        connections.afterPropertiesSet();
        open.add(connections::destroy);
        return new ReactiveStringRedisTemplate(connections);
    }

    private TransferEngine engine() {
        return track(TransferEngine.builder()
                .transport("tcp")
                .bindAddress("127.0.0.1")
                .build());
    }

    private MemoryRegion region(final TransferEngine engine) {
        return engine.register(arena.allocate(4096, 4096), Device.host());
    }

    private <T extends AutoCloseable> T track(final T closeable) {
        open.add(closeable);
        return closeable;
    }
}
