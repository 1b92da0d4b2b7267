package dev.transferengine.autoconfigure.exchange;

import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionDescriptor;

import java.util.Map;

/**
 * What a service publishes for its peers: its engine's main address (where to send) and the descriptors of the
 * regions it lets them write into, by name. As JSON, descriptors are in their text forms:
 * {@code {"mainAddress":"0103746370...","regions":{"kv-pool":"AQAAQ..."}}}.
 *
 * @param mainAddress the engine's {@link dev.transferengine.TransferEngine#mainAddress()}
 * @param regions     the published regions' descriptors, by the name they were published under
 */
public record ServiceDescriptors(NetworkAddress mainAddress, Map<String, RegionDescriptor> regions) {

    /** Copies {@code regions}. */
    public ServiceDescriptors {
        regions = Map.copyOf(regions);
    }
}
