package dev.transferengine;

import dev.transferengine.exceptions.InvalidRequestException;

/** How a single write, an imm-only write or a barrier is spread over the NICs of a group. */
public sealed interface Routing {

    /**
     * Split into {@code shards} pieces, each through a different NIC of the group, so {@code shards} may not exceed
     * the group's NIC count. A {@link SingleWrite} is cut into consecutive pieces of
     * {@code roundUp(ceil(length / shards), 8192)} bytes (the last one shorter, possibly empty); piece {@code i}
     * goes through NIC {@code (first + i) % nics}, where {@code first} is a cursor of the worker that advances past the
     * NICs each request used, so successive requests start on different NICs. An {@link ImmWrite} is one piece
     * (through the cursor's next NIC) whatever {@code shards} says, and a {@link BarrierWrite} takes only {@code sharded(1)}. With an imm, the receiver sees
     * one imm event per piece, i.e. {@code shards} events for a sharded {@link SingleWrite}.
     *
     * @param shards how many pieces, 1..4; more than the group has NICs is refused at submission with an
     *     {@link InvalidRequestException}
     * @return the routing
     * @throws IllegalArgumentException if {@code shards} is not 1..4
     */
    static Routing sharded(final int shards) {
        return new Sharded(shards);
    }

    /**
     * Everything through NIC {@code nic}; one imm event per destination.
     *
     * @param nic the index of our NIC within the group, 0..3; a NIC the group lacks is refused at submission with
     *     an {@link InvalidRequestException}
     * @return the routing
     * @throws IllegalArgumentException if {@code nic} is not 0..3
     */
    static Routing pinned(final int nic) {
        return new Pinned(nic);
    }

    /**
     * Split over several NICs; see {@link #sharded(int)}.
     *
     * @param shards how many pieces, 1..4
     */
    record Sharded(int shards) implements Routing {
        /**
         * Checks the shard count.
         *
         * @throws IllegalArgumentException if {@code shards} is not 1..4
         */
        public Sharded {
            if (shards < 1 || shards > 4) {
                throw new IllegalArgumentException("shards must be 1..4, was " + shards);
            }
        }
    }

    /**
     * Through one NIC; see {@link #pinned(int)}.
     *
     * @param nic the index of our NIC within the group, 0..3
     */
    record Pinned(int nic) implements Routing {
        /**
         * Checks the NIC index.
         *
         * @throws IllegalArgumentException if {@code nic} is not 0..3
         */
        public Pinned {
            if (nic < 0 || nic > 3) {
                throw new IllegalArgumentException("nic must be 0..3, was " + nic);
            }
        }
    }
}
