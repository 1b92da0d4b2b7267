package dev.transferengine;

/** How a scatter spreads its targets over the NICs of a group. */
public sealed interface GroupRouting {

    /** Targets cut into contiguous ranges, one range per NIC; one write (and imm) per target. */
    static GroupRouting shardPeers() {
        return ShardPeers.INSTANCE;
    }

    /** Every NIC writes a 1/N byte slice of every target; N writes (and imms) per target. */
    static GroupRouting shardBytes() {
        return ShardBytes.INSTANCE;
    }

    /** Everything through one NIC; one write (and imm) per target. */
    static GroupRouting singleNic(final int nic) {
        return new SingleNic(nic);
    }

    enum ShardPeers implements GroupRouting {
        INSTANCE
    }

    enum ShardBytes implements GroupRouting {
        INSTANCE
    }

    record SingleNic(int nic) implements GroupRouting {
        public SingleNic {
            if (nic < 0 || nic > 3) {
                throw new IllegalArgumentException("nic must be 0..3, was " + nic);
            }
        }
    }
}
