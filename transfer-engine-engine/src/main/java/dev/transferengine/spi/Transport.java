package dev.transferengine.spi;

import dev.transferengine.EngineConfig;

import org.jspecify.annotations.Nullable;

/** A transport, registered in {@code META-INF/services/dev.transferengine.spi.Transport}. */
public interface Transport {

    /**
     * The transport's name.
     *
     * @return the name users select, e.g. {@code tcp}; also the transport name inside its
     *     {@link dev.transferengine.NetworkAddress}s
     */
    String name();

    /**
     * Rank for {@code transport=auto}.
     *
     * @return the rank; lower is preferred among the available ones
     */
    int autoPreference();

    /**
     * Whether the transport can run here with {@code config}. Must not throw: a library that fails to load is a
     * cause, not an error.
     *
     * @param config the engine's config, whose options may select a provider or device
     * @return null when the transport can run; otherwise why not (library missing, no device, ...)
     */
    @Nullable String unavailabilityCause(EngineConfig config);

    /**
     * Opens one NIC. Called on the group's worker thread, once per NIC, and again when a failed group restarts.
     *
     * @param context the NIC's group, index, config and listener
     * @return the open domain, which the worker then owns
     * @throws dev.transferengine.exceptions.TransportUnavailableException if the NIC cannot be opened here, with the reason
     */
    Domain openDomain(DomainContext context);
}
