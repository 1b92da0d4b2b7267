package dev.transferengine.moe;

import dev.transferengine.RegionDescriptor;

import java.util.List;

/**
 * Every rank's region descriptor, as each rank published it ({@code descriptor()}), in index order within each role.
 *
 * @param dispatchers the dispatchers' descriptors
 * @param experts the expert ranks' descriptors
 */
public record MoePeers(List<RegionDescriptor> dispatchers, List<RegionDescriptor> experts) {

    /**
     * Copies the lists.
     *
     * @throws IllegalArgumentException if a list is empty
     */
    public MoePeers {
        if (dispatchers.isEmpty() || experts.isEmpty()) {
            throw new IllegalArgumentException("an exchange needs at least one dispatcher and one expert rank");
        }
        dispatchers = List.copyOf(dispatchers);
        experts = List.copyOf(experts);
    }

    /**
     * Checks the peers against a shape.
     *
     * @param shape the exchange's shape
     * @throws IllegalArgumentException if the counts differ from the shape's
     */
    void check(final MoeShape shape) {
        if (dispatchers.size() != shape.dispatchers() || experts.size() != shape.expertRanks()) {
            throw new IllegalArgumentException("the shape has " + shape.dispatchers() + " dispatchers and "
                    + shape.expertRanks() + " expert ranks, the peers list " + dispatchers.size() + " and "
                    + experts.size());
        }
    }
}
