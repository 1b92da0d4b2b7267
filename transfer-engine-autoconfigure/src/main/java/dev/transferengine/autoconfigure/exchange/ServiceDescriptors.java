package dev.transferengine.autoconfigure.exchange;

import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionDescriptor;

import java.util.Map;

/**
 * What a service publishes for its peers: its engine's main address (where to send) and the descriptors of the
 * regions it lets them write into, by name. As JSON, descriptors are in their text forms:
 * {@code {"mainAddress":"0103746370...","generation":1764662400000001,"regions":{"kv-pool":"AQAAQ..."}}}.
 *
 * @param mainAddress the engine's {@link dev.transferengine.TransferEngine#mainAddress()}
 * @param generation  changes when the service restarts and whenever it publishes or withdraws a region (a rekey is
 *                    published again), so a peer can tell that what it holds is stale; 0 from a service that
 *                    predates it
 * @param regions     the published regions' descriptors, by the name they were published under
 */
public record ServiceDescriptors(NetworkAddress mainAddress, long generation, Map<String, RegionDescriptor> regions) {

    /** Copies {@code regions}. */
    public ServiceDescriptors {
        regions = Map.copyOf(regions);
    }

    /**
     * Descriptors without a generation (0).
     *
     * @param mainAddress the engine's main address
     * @param regions     the published regions' descriptors, by name
     */
    public ServiceDescriptors(final NetworkAddress mainAddress, final Map<String, RegionDescriptor> regions) {
        this(mainAddress, 0, regions);
    }
}
