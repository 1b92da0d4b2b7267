package dev.transferengine;

import java.util.Objects;

/**
 * How often a transport stopped something at a boundary of trust or of a bound: a failed handshake, a refused
 * connection or request, a connection it closed, a peer it forgot. Summed over the NICs of an engine; read with
 * {@link TransferEngine#transportEvents()}. Transports without such checks report none.
 *
 * @param category    what happened, stable and lower case: {@code handshakes.failed}, {@code refusals},
 *                    {@code connections.closed} or {@code peers.evicted}
 * @param reason      why, stable and lower case with underscores, e.g. {@code auth} or {@code unknown_key}
 * @param description one sentence for humans
 * @param count       events since the NICs opened (a group restarted by the engine starts its NICs at 0)
 */
public record TransportEvent(String category, String reason, String description, long count) {

    /**
     * Checks that no text is null.
     *
     * @throws NullPointerException if a text is null
     */
    public TransportEvent {
        Objects.requireNonNull(category, "category");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(description, "description");
    }
}
