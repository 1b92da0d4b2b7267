package dev.transferengine.core;

import dev.transferengine.EngineConfig;
import dev.transferengine.TransferEngine;
import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.spi.Transport;

import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Entry point from the API's builder into the core: picks the transport and opens the engine. */
public final class Engines {

    private static final Logger LOG = LoggerFactory.getLogger(Engines.class);
    private static final String AUTO = "auto";

    private Engines() {}

    /**
     * Opens an engine; {@code transport=auto} takes the most preferred available transport and logs why others were
     * skipped. {@code updater} is how workers bump the users' {@link dev.transferengine.TransferCounters}.
     */
    public static TransferEngine open(final EngineConfig config, final TransferCountersUpdater updater) {
        return open(config, updater, System::nanoTime);
    }

    /**
     * Opens an engine whose workers read time from {@code clock} (nanoseconds, monotonic) to expire operations, so
     * that tests drive timeouts by hand instead of waiting for them.
     */
    public static TransferEngine open(
            final EngineConfig config, final TransferCountersUpdater updater, final LongSupplier clock) {
        return new Engine(config, select(config, transports()), updater, clock);
    }

    /** Every transport on the class path, most preferred first. */
    public static List<Transport> transports() {
        return ServiceLoader.load(Transport.class, Engines.class.getClassLoader()).stream()
                .map(ServiceLoader.Provider::get)
                .sorted(Comparator.comparingInt(Transport::autoPreference))
                .toList();
    }

    static Transport select(final EngineConfig config, final List<Transport> transports) {
        final String wanted = config.transport();
        if (!AUTO.equals(wanted)) {
            final Transport transport = transports.stream()
                    .filter(t -> t.name().equals(wanted))
                    .findFirst()
                    .orElseThrow(() -> new TransportUnavailableException(
                            wanted,
                            "no such transport; known: "
                                    + transports.stream().map(Transport::name).collect(Collectors.joining(", "))
                                    + ", auto"));
            final String cause = transport.unavailabilityCause(config);
            if (cause != null) {
                throw new TransportUnavailableException(wanted, cause);
            }
            return transport;
        }
        for (final Transport transport : transports) {
            final String cause = transport.unavailabilityCause(config);
            if (cause == null) {
                LOG.info("transport auto: using {}", transport.name());
                return transport;
            }
            LOG.info("transport auto: skipping {}: {}", transport.name(), cause);
        }
        throw new TransportUnavailableException(AUTO, "no transport is available");
    }
}
