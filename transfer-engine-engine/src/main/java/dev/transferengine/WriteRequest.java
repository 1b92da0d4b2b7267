package dev.transferengine;

import java.util.OptionalInt;

/**
 * A one-sided write, immutable and reusable: submitting the same request object many times is the normal pattern.
 * The {@link #imm()} is delivered to the receiver once per write the request turns into (see the imm-event table
 * in the README).
 */
public sealed interface WriteRequest extends TransferRequest
        permits SingleWrite, PagedWrite, ImmWrite, BarrierWrite, ScatterWrite {

    /**
     * The immediate this request delivers with each of its writes.
     *
     * @return the 32-bit imm, or empty for a write the receiver is not told about
     */
    OptionalInt imm();
}
