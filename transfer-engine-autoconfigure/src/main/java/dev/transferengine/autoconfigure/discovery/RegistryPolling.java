package dev.transferengine.autoconfigure.discovery;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A watch by polling: each subscription reads the whole registry every interval and reports the difference to what
 * it read before. Polling rather than push (Redis keyspace notifications, say), because a poll cannot miss an event:
 * notifications are fire-and-forget (one lost over a reconnect is lost for good), need server configuration that
 * managed Redis services often forbid, and an expiry is notified only when Redis gets round to expiring the key.
 */
final class RegistryPolling {

    private static final Logger LOG = LoggerFactory.getLogger(RegistryPolling.class);

    private RegistryPolling() {}

    /**
     * The changes between polls of {@code snapshot}; a poll that fails is logged and skipped.
     *
     * @param snapshot reads every entry of the registry now, by engine name
     * @param interval time between polls; the first poll is at once
     * @param registry what the registry is, for the log
     */
    static Flux<RegistryChange> watch(
            final Supplier<Mono<Map<String, RegisteredEngine>>> snapshot,
            final Duration interval,
            final String registry) {
        return Flux.defer(() -> {
            final AtomicReference<Map<String, RegisteredEngine>> seen = new AtomicReference<>(Map.of());
            return Flux.interval(Duration.ZERO, interval)
                    .onBackpressureDrop()
                    .concatMap(
                            tick -> snapshot.get().onErrorResume(e -> {
                                LOG.warn(
                                        "watch of {} could not read it, retrying in {}: {}",
                                        registry,
                                        interval,
                                        e.toString());
                                return Mono.empty();
                            }),
                            1)
                    .concatMapIterable(now -> diff(seen.getAndSet(now), now));
        });
    }

    /**
     * What changed from {@code before} to {@code after}, by engine name.
     *
     * @return appeared, changed (another generation, or other content) and vanished engines, in name order
     */
    static List<RegistryChange> diff(
            final Map<String, RegisteredEngine> before, final Map<String, RegisteredEngine> after) {
        final TreeSet<String> names = new TreeSet<>(before.keySet());
        names.addAll(after.keySet());
        final List<RegistryChange> changes = new ArrayList<>();
        for (final String name : names) {
            final RegisteredEngine was = before.get(name);
            final RegisteredEngine is = after.get(name);
            if (was == null && is != null) {
                changes.add(new RegistryChange(RegistryChange.Kind.APPEARED, is));
            } else if (was != null && is == null) {
                changes.add(new RegistryChange(RegistryChange.Kind.VANISHED, was));
            } else if (was != null && is != null && !was.equals(is)) {
                changes.add(new RegistryChange(RegistryChange.Kind.CHANGED, is));
            }
        }
        return changes;
    }
}
