package dev.transferengine.transport.tcp;

import dev.transferengine.EngineConfig;
import dev.transferengine.GroupSpec;
import dev.transferengine.IdleStrategyKind;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.DomainListener;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/** Opens loopback domains for tests and drives them from the test thread. */
final class TcpDomains {

    /** Generous: only there so a broken transport fails the test instead of hanging it. */
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private TcpDomains() {}

    static EngineConfig config(final int basePort, final Map<String, String> options) {
        return config("127.0.0.1", basePort, options);
    }

    static EngineConfig config(final String bindAddress, final int basePort, final Map<String, String> options) {
        return new EngineConfig(
                "tcp",
                List.of(GroupSpec.of(4)),
                bindAddress,
                basePort,
                IdleStrategyKind.BACKOFF,
                Duration.ofSeconds(10),
                Duration.ofSeconds(1),
                1024,
                1024,
                1024,
                Duration.ofMinutes(1),
                options,
                null);
    }

    static TcpDomain open(final DomainListener listener) {
        return open(listener, 0, 0, Map.of());
    }

    static TcpDomain open(final DomainListener listener, final int nic) {
        return open(listener, 0, nic, Map.of());
    }

    static TcpDomain open(
            final DomainListener listener, final int basePort, final int nic, final Map<String, String> options) {
        return (TcpDomain)
                new TcpTransport().openDomain(new DomainContext(config(basePort, options), 0, nic, listener));
    }

    /** Opens NIC 0 on an ephemeral port whose poll step reads {@code nanoClock}, e.g. a manual one. */
    static TcpDomain open(
            final DomainListener listener, final Map<String, String> options, final LongSupplier nanoClock) {
        final EngineConfig config = config(0, options);
        return TcpDomain.open(new DomainContext(config, 0, 0, listener), TcpSettings.of(config), nanoClock);
    }

    /** Polls every domain in turn until {@code condition} holds. */
    static void pollUntil(final BooleanSupplier condition, final TcpDomain... domains) {
        final long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("condition not reached within " + DEADLINE);
            }
            for (final TcpDomain domain : domains) {
                domain.poll();
            }
        }
    }
}
