package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionDescriptor;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.script.RedisScript;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A {@link DescriptorRegistry} in Redis (Spring Data Redis, reactive). Each engine's entry is one string key,
 * {@code <prefix>{<engine name>}:engine}, set with a time to live of the lease and set again every third of the
 * lease, so Redis itself removes the entry of an engine that stopped renewing. The generation is
 * {@code INCR <prefix>{<engine name>}:generation}: it grows on every publish, withdraw and restart, across processes.
 * A Lua script takes the generation and sets the entry in one step, and a renewal never overwrites a newer
 * generation (an engine restarted under the same name wins over its old self). The braces make both keys one hash
 * slot in Redis Cluster.
 *
 * <p>{@link #watch()} polls (see {@link RegistryPolling} for why): a {@code SCAN} of the entries and an {@code MGET}
 * every watch interval. The Redis user needs {@code GET SET DEL INCR PEXPIRE MGET SCAN EVAL EVALSHA} on the keys
 * under the prefix (docs/spring-boot.md has the ACL line).
 */
public final class RedisDescriptorRegistry implements DescriptorRegistry {

    private static final Logger LOG = LoggerFactory.getLogger(RedisDescriptorRegistry.class);

    private static final String ENTRY_SUFFIX = "}:engine";

    /** How long a generation counter outlives its engine's last publish or renewal. */
    private static final Duration GENERATION_KEPT = Duration.ofDays(1);

    /** The shortest lease: renewals run every third of it, and each is a round trip to Redis. */
    private static final Duration MIN_LEASE = Duration.ofSeconds(1);

    /**
     * KEYS: entry, generation counter. ARGV: body, lease ms, the generation to renew ('' takes a new one), counter
     * time to live ms. Returns the entry's generation, or -1 when a newer generation owns the name.
     */
    private static final RedisScript<Long> PUT = RedisScript.of("""
            local gen = ARGV[3]
            if gen == '' then
              gen = redis.call('INCR', KEYS[2])
              redis.call('PEXPIRE', KEYS[2], ARGV[4])
            else
              gen = tonumber(gen)
              if tonumber(redis.call('GET', KEYS[2]) or '0') > gen then return -1 end
              redis.call('SET', KEYS[2], gen, 'PX', ARGV[4])
            end
            redis.call('SET', KEYS[1], 'generation ' .. gen .. '\\n' .. ARGV[1], 'PX', ARGV[2])
            return gen
            """, Long.class);

    /** KEYS: entry, generation counter. ARGV: this engine's generation. Deletes the entry unless a newer owns it. */
    private static final RedisScript<Long> REMOVE = RedisScript.of("""
            if tonumber(redis.call('GET', KEYS[2]) or '0') > tonumber(ARGV[1]) then return 0 end
            return redis.call('DEL', KEYS[1])
            """, Long.class);

    private final ReactiveStringRedisTemplate redis;
    private final String keyPrefix;
    private final String name;
    private final NetworkAddress mainAddress;
    private final Duration lease;
    private final Duration watchInterval;
    private final List<String> keys;
    private final Map<String, RegionDescriptor> regions = new ConcurrentSkipListMap<>();
    /** The generation of this engine's latest publish; 0 before the first. */
    private final AtomicLong generation = new AtomicLong();

    private final AtomicReference<@Nullable Disposable> renewal = new AtomicReference<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Completes the watches when the registry closes, before the connection factory stops under them. */
    private final Sinks.Empty<Void> closing = Sinks.empty();

    /**
     * A registry for one engine; nothing is published until {@link #announce()} or {@link #publish}.
     *
     * @param redis         the template, e.g. over Boot's {@code ReactiveRedisConnectionFactory}
     * @param keyPrefix     prefix of every key, e.g. {@code transfer-engine:}
     * @param engineName    this engine's name, 1 to 128 of {@code A-Z a-z 0-9 . _ -}
     * @param mainAddress   this engine's main address
     * @param lease         how long the entry outlives its last renewal, at least 1 s
     * @param watchInterval how often a watch polls, positive
     * @throws IllegalArgumentException for a bad name, a lease under 1 s or a watch interval that is not positive
     */
    public RedisDescriptorRegistry(
            final ReactiveStringRedisTemplate redis,
            final String keyPrefix,
            final String engineName,
            final NetworkAddress mainAddress,
            final Duration lease,
            final Duration watchInterval) {
        if (lease.compareTo(MIN_LEASE) < 0) {
            throw new IllegalArgumentException("the registry lease must be at least " + MIN_LEASE + ", was " + lease);
        }
        if (watchInterval.isNegative() || watchInterval.isZero()) {
            throw new IllegalArgumentException("the watch interval must be positive, was " + watchInterval);
        }
        this.redis = redis;
        this.keyPrefix = keyPrefix;
        this.name = RegistryNames.engine(engineName);
        this.mainAddress = mainAddress;
        this.lease = lease;
        this.watchInterval = watchInterval;
        this.keys = List.of(entryKey(engineName), keyPrefix + "{" + engineName + "}:generation");
    }

    @Override
    public String engineName() {
        return name;
    }

    @Override
    public Mono<Void> announce() {
        return put(true);
    }

    @Override
    public Mono<Void> publish(final String region, final RegionDescriptor descriptor) {
        return Mono.defer(() -> {
            regions.put(RegistryNames.region(region), descriptor);
            return put(true);
        });
    }

    @Override
    public Mono<Void> withdraw(final String region) {
        return Mono.defer(() -> {
            regions.remove(region);
            return put(true);
        });
    }

    @Override
    public Mono<Void> unpublish() {
        return Mono.defer(() -> {
            stopRenewing();
            final long mine = generation.get();
            return mine == 0
                    ? Mono.empty()
                    : redis.execute(REMOVE, keys, List.of(Long.toString(mine))).then();
        });
    }

    @Override
    public Mono<RegisteredEngine> lookup(final String engineName) {
        return Mono.defer(() -> {
            final String key = entryKey(RegistryNames.engine(engineName));
            return redis.opsForValue().get(key).map(entry -> RedisEntries.parse(engineName, key, entry));
        });
    }

    @Override
    public Flux<RegistryChange> watch() {
        return RegistryPolling.watch(this::snapshot, watchInterval, "Redis registry " + keyPrefix)
                .takeUntilOther(closing.asMono().then(Mono.just(true)));
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            stopRenewing();
            closing.tryEmitEmpty();
        }
    }

    /** Sets the entry; with {@code bump} under a new generation, else renewing the current one. */
    private Mono<Void> put(final boolean bump) {
        return Mono.defer(() -> {
            if (closed.get()) {
                return Mono.error(new IllegalStateException("the registry of engine '" + name + "' is closed"));
            }
            final long mine = generation.get();
            final List<String> args = List.of(
                    RedisEntries.body(mainAddress, regions),
                    Long.toString(lease.toMillis()),
                    bump ? "" : Long.toString(mine),
                    Long.toString(GENERATION_KEPT.toMillis()));
            return redis.execute(PUT, keys, args)
                    .next()
                    .doOnNext(taken -> {
                        if (bump) {
                            generation.accumulateAndGet(taken, Math::max);
                            startRenewing();
                        } else if (taken < 0 && generation.get() == mine) {
                            LOG.warn(
                                    "another engine publishes under the name '{}' now (a newer generation than {});"
                                            + " this one stops renewing its entry",
                                    name,
                                    mine);
                            stopRenewing();
                        }
                    })
                    .then();
        });
    }

    private void startRenewing() {
        if (renewal.get() != null || closed.get()) {
            return;
        }
        final Duration every = lease.dividedBy(3);
        final Disposable started = Flux.interval(every, every)
                .onBackpressureDrop()
                .concatMap(
                        tick -> put(false).onErrorResume(e -> {
                            LOG.warn(
                                    "could not renew the registry entry of '{}' (lease {}): {}",
                                    name,
                                    lease,
                                    e.toString());
                            return Mono.empty();
                        }),
                        1)
                .subscribe();
        if (!renewal.compareAndSet(null, started) || closed.get()) {
            started.dispose();
        }
    }

    private void stopRenewing() {
        final Disposable running = renewal.getAndSet(null);
        if (running != null) {
            running.dispose();
        }
    }

    private Mono<Map<String, RegisteredEngine>> snapshot() {
        final String pattern = escapeGlob(keyPrefix) + "{*" + ENTRY_SUFFIX;
        return redis.scan(ScanOptions.scanOptions().match(pattern).count(256).build())
                .distinct()
                .collectList()
                .flatMap(found -> found.isEmpty()
                        ? Mono.just(Map.<String, RegisteredEngine>of())
                        : redis.opsForValue().multiGet(found).map(values -> entries(found, values)));
    }

    /** The entries by engine name; a key that expired between the SCAN and the MGET is left out. */
    private Map<String, RegisteredEngine> entries(final List<String> found, final List<String> values) {
        final Map<String, RegisteredEngine> engines = new HashMap<>();
        for (int i = 0; i < found.size(); i++) {
            final String key = found.get(i);
            final @Nullable String value = values.get(i); // null when the key expired after the SCAN
            if (value == null) {
                continue;
            }
            final String engineName = key.substring(keyPrefix.length() + 1, key.length() - ENTRY_SUFFIX.length());
            try {
                engines.put(engineName, RedisEntries.parse(engineName, key, value));
            } catch (final IllegalStateException e) {
                LOG.warn("the registry watch skips an entry: {}", e.getMessage());
            }
        }
        return engines;
    }

    private String entryKey(final String engineName) {
        return keyPrefix + "{" + engineName + ENTRY_SUFFIX;
    }

    /** The prefix as a SCAN pattern that matches it literally. */
    private static String escapeGlob(final String text) {
        final StringBuilder escaped = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            final char c = text.charAt(i);
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                escaped.append('\\');
            }
            escaped.append(c);
        }
        return escaped.toString();
    }
}
