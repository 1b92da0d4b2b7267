package dev.transferengine;

/** How a single write, an imm-only write or a barrier is spread over the NICs of a group. */
public sealed interface Routing {

    /** Split into {@code shards} pieces, NICs chosen round-robin; the receiver sees {@code shards} imm events. */
    static Routing sharded(final int shards) {
        return new Sharded(shards);
    }

    /** Everything through NIC {@code nic}; one imm event per destination. */
    static Routing pinned(final int nic) {
        return new Pinned(nic);
    }

    record Sharded(int shards) implements Routing {
        public Sharded {
            if (shards < 1 || shards > 4) {
                throw new IllegalArgumentException("shards must be 1..4, was " + shards);
            }
        }
    }

    record Pinned(int nic) implements Routing {
        public Pinned {
            if (nic < 0 || nic > 3) {
                throw new IllegalArgumentException("nic must be 0..3, was " + nic);
            }
        }
    }
}
