package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionDescriptor;

import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;

/**
 * One engine's entry in a {@link DescriptorRegistry}.
 *
 * @param name        the engine's name in the registry
 * @param generation  changes when the engine restarts and whenever it publishes or withdraws a region
 * @param mainAddress where to send to the engine
 * @param regions     the descriptors it published, by region name
 */
public record RegisteredEngine(
        String name, long generation, NetworkAddress mainAddress, Map<String, RegionDescriptor> regions) {

    /** Copies {@code regions}, sorted by name. */
    public RegisteredEngine {
        regions = Map.copyOf(new TreeMap<>(regions));
    }

    /**
     * The descriptor published under {@code region}.
     *
     * @param region the region's name
     * @return its descriptor
     * @throws NoSuchElementException naming the engine and the regions it publishes, if none is published so
     */
    public RegionDescriptor region(final String region) {
        final RegionDescriptor descriptor = regions.get(region);
        if (descriptor == null) {
            throw new NoSuchElementException("engine '" + name + "' (generation " + generation
                    + ") publishes no region '" + region + "'; it publishes " + new TreeMap<>(regions).keySet());
        }
        return descriptor;
    }

    /**
     * For people: the address readably, the region names, never a remote key.
     *
     * @return e.g. {@code RegisteredEngine[name=decode-0, generation=3, mainAddress=tcp://10.0.0.2:7400,
     *     regions=[kv-pool]]}
     */
    @Override
    public String toString() {
        return "RegisteredEngine[name=" + name + ", generation=" + generation + ", mainAddress="
                + mainAddress.describe() + ", regions=" + new TreeMap<>(regions).keySet() + "]";
    }
}
