package dev.transferengine.test;

import dev.transferengine.EngineConfig;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.Transport;

import org.jspecify.annotations.Nullable;

/**
 * A transport for benchmarks only, named {@value #NAME}: its NICs ({@link InstantDomain}) complete every write and
 * send at once, inside the post call, and move no bytes. An engine on it measures the engine alone, up to the
 * posting boundary: how many requests and pages one worker can take, plan, post and end per second. Never chosen
 * by {@code transport=auto}.
 */
public final class InstantTransport implements Transport {

    /** The transport's name. */
    public static final String NAME = "instant";

    /** For {@link java.util.ServiceLoader}. */
    public InstantTransport() {}

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int autoPreference() {
        return Integer.MAX_VALUE;
    }

    @Override
    public @Nullable String unavailabilityCause(final EngineConfig config) {
        return NAME.equals(config.transport()) ? null : "a benchmark transport; select it by name";
    }

    @Override
    public Domain openDomain(final DomainContext context) {
        return new InstantDomain(context);
    }
}
