package dev.transferengine.sample.discovery;

import dev.transferengine.autoconfigure.discovery.RegisteredEngine;

import java.util.List;

/**
 * One engine as {@code GET /discovery/engines} shows it: no remote key, the address readably.
 *
 * @param name       its name in the registry
 * @param generation its generation there
 * @param address    its main address, readably (e.g. {@code tcp://10.0.0.2:7400})
 * @param regions    the names of the regions it publishes
 */
public record DiscoveredEngine(String name, long generation, String address, List<String> regions) {

    static DiscoveredEngine of(final RegisteredEngine engine) {
        return new DiscoveredEngine(
                engine.name(),
                engine.generation(),
                engine.mainAddress().describe(),
                List.copyOf(engine.regions().keySet()));
    }
}
