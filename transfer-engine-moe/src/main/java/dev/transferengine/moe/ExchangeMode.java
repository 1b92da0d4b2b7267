package dev.transferengine.moe;

/** How a layer's tokens and outputs travel. */
public enum ExchangeMode {
    /**
     * The engine's way: per expert rank one write of the slot's header (the counts) and exactly the routed rows behind
     * it, with one imm (also when no row goes there); the combine sends back exactly as many rows.
     */
    ROUTED,
    /**
     * The collective way, as the baseline: one message per expert rank holding the counts and every row slot padded to
     * the worst case ({@link MoeShape#maxRowsPerRank()}); the combine sends back the padded slot too.
     */
    PADDED
}
