package dev.transferengine.moe;

import java.io.Serial;

import org.jspecify.annotations.Nullable;

/**
 * A layer failed because a peer rank died, stopped answering or sent something malformed; the message and the
 * accessors name that rank.
 */
public final class MoeRankFailedException extends RuntimeException {

    @Serial
    private static final long serialVersionUID = 1L;

    private final MoeRole role;
    private final int rank;
    private final int layer;

    /**
     * A failed layer.
     *
     * @param role the failed rank's role
     * @param rank the failed rank's index within its role
     * @param layer the layer that failed
     * @param reason what went wrong
     * @param cause the engine's failure, or null
     */
    public MoeRankFailedException(
            final MoeRole role, final int rank, final int layer, final String reason, final @Nullable Throwable cause) {
        super("layer " + layer + ": " + role.name(rank) + " failed: " + reason, cause);
        this.role = role;
        this.rank = rank;
        this.layer = layer;
    }

    /**
     * The failed rank's role.
     *
     * @return the role
     */
    public MoeRole role() {
        return role;
    }

    /**
     * The failed rank's index within its role.
     *
     * @return the index
     */
    public int rank() {
        return rank;
    }

    /**
     * The layer that failed.
     *
     * @return the layer
     */
    public int layer() {
        return layer;
    }
}
