package dev.transferengine.spi;

import dev.transferengine.EngineConfig;

/**
 * What a domain is opened with.
 *
 * @param config   the engine's config: bind address, base port, timeouts and transport options
 * @param group    index of its group
 * @param nic      index within the group
 * @param listener where it reports completions, imms and receives
 */
public record DomainContext(EngineConfig config, int group, int nic, DomainListener listener) {

    /**
     * The port this NIC binds to.
     *
     * @return 0 (ephemeral) when the base port is 0, else {@code basePort + 4 * group + nic}
     */
    public int port() {
        return config.basePort() == 0 ? 0 : config.basePort() + 4 * group + nic;
    }
}
