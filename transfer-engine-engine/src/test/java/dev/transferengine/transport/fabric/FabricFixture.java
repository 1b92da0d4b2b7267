package dev.transferengine.transport.fabric;

import static org.awaitility.Awaitility.await;

import dev.transferengine.EngineConfig;
import dev.transferengine.GroupSpec;
import dev.transferengine.IdleStrategyKind;
import dev.transferengine.TransferEngineException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.RecordingDomainListener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

/** Opens fabric domains outside an engine and drives them from the test thread, as a worker would. */
final class FabricFixture implements AutoCloseable {

    private final List<Domain> domains = new ArrayList<>();

    static EngineConfig config(final String provider, final int nics, final Map<String, String> extra) {
        final Map<String, String> options = new HashMap<>(extra);
        options.putIfAbsent(FabricTransport.PROVIDER_OPTION, provider);
        return new EngineConfig("fabric", List.of(GroupSpec.of(nics)), "127.0.0.1", 0, IdleStrategyKind.BACKOFF,
            Duration.ofSeconds(10), Duration.ofSeconds(1), 1024, 1024, 1024, options);
    }

    /** Skips the calling test unless {@code provider} can run here, naming why not. */
    static void assumeAvailable(final String provider) {
        final String cause = new FabricTransport().unavailabilityCause(config(provider, 1, Map.of()));
        org.junit.jupiter.api.Assumptions.assumeTrue(cause == null, () -> "needs libfabric provider " + provider
            + ": " + cause);
    }

    Domain open(final String provider, final int nic, final RecordingDomainListener listener) {
        return open(config(provider, nic + 1, Map.of()), nic, listener);
    }

    Domain open(final EngineConfig config, final int nic, final RecordingDomainListener listener) {
        final Domain domain = new FabricTransport().openDomain(new DomainContext(config, 0, nic, listener));
        domains.add(domain);
        return domain;
    }

    /** Polls every open domain until {@code condition} holds (bounded, so a lost completion fails the test). */
    void pollUntil(final BooleanSupplier condition) {
        await().atMost(Duration.ofSeconds(30)).pollInSameThread().pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(1)).until(() -> {
                for (int i = 0; i < 200; i++) {
                    for (final Domain domain : domains) {
                        domain.poll();
                    }
                    if (condition.getAsBoolean()) {
                        return true;
                    }
                }
                return false;
            });
    }

    void pollAll() {
        for (final Domain domain : domains) {
            domain.poll();
        }
    }

    @Override
    public void close() {
        for (int i = domains.size() - 1; i >= 0; i--) {
            domains.get(i).close();
        }
        domains.clear();
    }

}
