package dev.transferengine.spi;

import dev.transferengine.EngineConfig;

import org.jspecify.annotations.Nullable;

/** A transport, registered in {@code META-INF/services/dev.transferengine.spi.Transport}. */
public interface Transport {

    /** The name users select, e.g. {@code tcp}; also the transport name inside its {@link dev.transferengine.NetAddr}s. */
    String name();

    /** Rank for {@code transport=auto}: lower is preferred among the available ones. */
    int autoPreference();

    /** Null when the transport can run with {@code config}; otherwise why not (library missing, no device, ...). */
    @Nullable String unavailabilityCause(EngineConfig config);

    /** Opens one NIC. Called on the group's worker thread. */
    Domain openDomain(DomainContext context);
}
