package dev.transferengine.moe;

/** The two kinds of rank in the exchange. */
public enum MoeRole {
    /** Routes its data-parallel group's tokens to the experts and sums their outputs. */
    DISPATCHER("dispatcher"),
    /** Owns a share of the experts and computes them. */
    EXPERT("expert rank");

    private final String label;

    MoeRole(final String label) {
        this.label = label;
    }

    /**
     * How messages name a rank of this role.
     *
     * @param index the rank's index within its role
     * @return e.g. {@code "expert rank 3"}
     */
    public String name(final int index) {
        return label + " " + index;
    }
}
