package dev.transferengine;

import java.util.OptionalInt;

/**
 * A one-sided write, immutable and reusable: submitting the same request object many times is the normal pattern.
 * The {@link #imm()} is delivered to the receiver once per write the request turns into (see the imm-event table
 * in the README).
 */
public sealed interface WriteRequest permits SingleWrite, PagedWrite, ImmWrite, BarrierWrite, ScatterWrite {

    /** The 32-bit immediate carried by each write, if any. */
    OptionalInt imm();
}
