package dev.transferengine.test;

import dev.transferengine.EngineConfig;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.Transport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * Opens one NIC of a transport outside an engine, through the SPI only: the transport from {@link ServiceLoader}, a
 * {@link DomainContext} as an engine's worker would give it, its config made by {@link TransferEngine#builder()}. The
 * caller then drives the domain itself (poll, write), as the worker would, on one thread: for a transport's own tests
 * and benchmarks below the engine.
 */
public final class Domains {

    private Domains() {}

    /**
     * Opens NIC 0 of group 0 on {@code 127.0.0.1}, an ephemeral port.
     *
     * @param transport the transport's name
     * @param options its options
     * @param listener what the domain reports to
     * @return the open domain; the caller polls and closes it
     * @throws IllegalStateException naming the transports found, or why {@code transport} cannot run here
     */
    public static Domain open(
            final String transport, final Map<String, String> options, final DomainListener listener) {
        final TransferEngineBuilder builder = TransferEngine.builder()
                .transport(transport)
                .bindAddress("127.0.0.1")
                .operationTimeout(Duration.ofSeconds(10))
                .drainTimeout(Duration.ofSeconds(1))
                .submitQueueCapacity(1024)
                .maxInFlight(1024)
                .maxUnexpectedImms(1024);
        options.forEach(builder::option);
        final EngineConfig config = builder.config();
        final Transport found = find(transport);
        final String cause = found.unavailabilityCause(config);
        if (cause != null) {
            throw new IllegalStateException("transport " + transport + " " + options + " cannot run here: " + cause);
        }
        return found.openDomain(new DomainContext(config, 0, 0, listener));
    }

    /**
     * {@code base} plus the {@code key=value} pairs of {@code extra}, separated by {@code ;} (JMH splits a
     * parameter's values at commas), e.g. {@code fabric.library=/opt/libfabric-2.1/lib/libfabric.so.1}.
     *
     * @param base the options to start from
     * @param extra more pairs, {@code ;}-separated
     * @return the merged options
     * @throws IllegalArgumentException naming a pair without {@code =}
     */
    public static Map<String, String> options(final Map<String, String> base, final String extra) {
        final Map<String, String> options = new HashMap<>(base);
        for (final String pair : extra.split(";", -1)) {
            if (pair.isBlank()) {
                continue;
            }
            final int eq = pair.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("transport option '" + pair + "' is not key=value");
            }
            options.put(pair.substring(0, eq).strip(), pair.substring(eq + 1).strip());
        }
        return options;
    }

    private static Transport find(final String name) {
        final List<String> names = new ArrayList<>();
        for (final Transport transport : ServiceLoader.load(Transport.class, Domains.class.getClassLoader())) {
            if (transport.name().equals(name)) {
                return transport;
            }
            names.add(transport.name());
        }
        throw new IllegalStateException("no transport named " + name + " on the class path (found " + names + ")");
    }
}
