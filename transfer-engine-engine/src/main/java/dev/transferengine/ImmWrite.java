package dev.transferengine;

import java.util.OptionalInt;

/**
 * A zero-byte write that carries only {@code imm} to the region {@code dst}; one imm event at the receiver.
 *
 * @param dst the receiver's region; no byte of it is written
 * @param value the 32-bit imm to deliver
 * @param routing which of our NICs sends it
 */
public record ImmWrite(RegionDescriptor dst, int value, Routing routing) implements WriteRequest {

    /**
     * An imm-only write sent from NIC 0.
     *
     * @param dst the receiver's region
     * @param imm the 32-bit imm to deliver
     * @return the request, reusable for any number of submissions
     */
    public static ImmWrite of(final RegionDescriptor dst, final int imm) {
        return new ImmWrite(dst, imm, Routing.pinned(0));
    }

    @Override
    public OptionalInt imm() {
        return OptionalInt.of(value);
    }
}
