package dev.transferengine;

import dev.transferengine.exceptions.InvalidRequestException;

/** How a scatter spreads its targets over the NICs of a group. */
public sealed interface GroupRouting {

    /**
     * Targets cut into contiguous ranges, one range per NIC; one write (and imm) per target.
     *
     * @return the routing; does not allocate
     */
    static GroupRouting shardPeers() {
        return ShardPeers.INSTANCE;
    }

    /**
     * Every NIC writes a 1/N byte slice of every target; N writes (and imms) per target.
     *
     * @return the routing; does not allocate
     */
    static GroupRouting shardBytes() {
        return ShardBytes.INSTANCE;
    }

    /**
     * Everything through one NIC; one write (and imm) per target.
     *
     * @param nic the index of our NIC within the group, 0..3; a NIC the group lacks is refused at submission with an
     *     {@link InvalidRequestException}
     * @return the routing
     * @throws IllegalArgumentException if {@code nic} is not 0..3
     */
    static GroupRouting singleNic(final int nic) {
        return new SingleNic(nic);
    }

    /** Targets in contiguous ranges, one range per NIC; see {@link #shardPeers()}. */
    enum ShardPeers implements GroupRouting {
        /** The one instance. */
        INSTANCE
    }

    /** A byte slice of every target per NIC; see {@link #shardBytes()}. */
    enum ShardBytes implements GroupRouting {
        /** The one instance. */
        INSTANCE
    }

    /**
     * Every target through one NIC; see {@link #singleNic(int)}.
     *
     * @param nic the index of our NIC within the group, 0..3
     */
    record SingleNic(int nic) implements GroupRouting {
        /**
         * Checks the NIC index.
         *
         * @throws IllegalArgumentException if {@code nic} is not 0..3
         */
        public SingleNic {
            if (nic < 0 || nic > 3) {
                throw new IllegalArgumentException("nic must be 0..3, was " + nic);
            }
        }
    }
}
