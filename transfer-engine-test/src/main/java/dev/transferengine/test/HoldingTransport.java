package dev.transferengine.test;

import dev.transferengine.EngineConfig;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.Transport;

import java.util.ServiceLoader;

import org.jspecify.annotations.Nullable;

/**
 * A test-only transport that opens the domains of the transport named by the option {@value #WRAPPED} and wraps
 * each in a {@link HoldingDomain}. Unavailable without that option, so {@code transport=auto} never takes it.
 */
public final class HoldingTransport implements Transport {

    /** The transport's name. */
    public static final String NAME = "holding";
    /** Engine option naming the transport whose domains are wrapped. */
    public static final String WRAPPED = "holding.transport";

    /** For {@link ServiceLoader}. */
    public HoldingTransport() {}

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int autoPreference() {
        return 0;
    }

    @Override
    public @Nullable String unavailabilityCause(final EngineConfig config) {
        final String wrapped = config.option(WRAPPED, "");
        if (wrapped.isEmpty()) {
            return "a test transport; set " + WRAPPED + " to the transport it wraps";
        }
        return wrapped(config).unavailabilityCause(config);
    }

    @Override
    public Domain openDomain(final DomainContext context) {
        return HoldingDomain.open(wrapped(context.config()), context);
    }

    private static Transport wrapped(final EngineConfig config) {
        final String name = config.option(WRAPPED, "");
        return ServiceLoader.load(Transport.class, HoldingTransport.class.getClassLoader()).stream()
                .map(ServiceLoader.Provider::get)
                .filter(t -> t.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no transport '" + name + "' to wrap"));
    }
}
