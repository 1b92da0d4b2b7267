package dev.transferengine;

import java.util.OptionalInt;

/** A zero-byte write that carries only {@code imm} to the region {@code dst}; one imm event at the receiver. */
public record ImmWrite(MrDesc dst, int value, Routing routing) implements WriteRequest {

    public static ImmWrite of(final MrDesc dst, final int imm) {
        return new ImmWrite(dst, imm, Routing.pinned(0));
    }

    @Override
    public OptionalInt imm() {
        return OptionalInt.of(value);
    }
}
