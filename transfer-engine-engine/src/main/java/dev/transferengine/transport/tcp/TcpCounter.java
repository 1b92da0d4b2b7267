package dev.transferengine.transport.tcp;

/**
 * Events of one tcp NIC that a bound, the handshake or a check stopped: each is counted, and logged at most
 * once per {@link TcpCounters#LOG_INTERVAL_NANOS} per counter (the ordinary ones only at DEBUG). Categories and
 * reasons are stable: metrics publish them ({@link dev.transferengine.TransportEvent}).
 */
enum TcpCounter {
    CONNECTIONS_REFUSED(
            "refusals",
            "connection_limit",
            true,
            "authenticated connections closed at once: the NIC held tcp.maxInboundConnections already"),
    HANDSHAKES_REFUSED(
            "refusals",
            "handshake_limit",
            true,
            "accepted sockets closed at once: the NIC ran tcp.maxPendingHandshakes unfinished handshakes already"),
    HANDSHAKES_REFUSED_PER_SOURCE(
            "refusals",
            "handshake_source_limit",
            true,
            "accepted sockets closed at once: their source address ran tcp.maxHandshakesPerSource unfinished "
                    + "handshakes already"),
    ERROR_CLOSED(
            "connections.closed",
            "error",
            true,
            "sockets closed after an Error (e.g. OutOfMemoryError) while serving them; the worker carries on"),
    HANDSHAKE_VERSION(
            "handshakes.failed", "version", true, "handshakes refused: the peer speaks another wire protocol version"),
    HANDSHAKE_AUTH_FAILED(
            "handshakes.failed",
            "auth",
            true,
            "handshakes refused: the peer's proof did not match any accepted cluster key"),
    HANDSHAKE_MALFORMED(
            "handshakes.failed",
            "malformed",
            true,
            "handshakes refused: malformed or unexpected frames before authentication"),
    HANDSHAKE_TIMEOUT("handshakes.failed", "timeout", true, "handshakes not finished within tcp.handshakeTimeoutMs"),
    HANDSHAKE_TLS(
            "handshakes.failed",
            "tls",
            true,
            "handshakes refused: TLS failed (the peer does not speak TLS, "
                    + "or one side does not trust the other's certificate)"),
    HANDSHAKE_RELAYED(
            "handshakes.failed",
            "address_mismatch",
            true,
            "our connections refused: the acceptor proved another address than the one dialled (a relay, "
                    + "a stale descriptor or a reused address)"),
    HANDSHAKE_CLOSED(
            "handshakes.failed", "closed", true, "connections closed by the peer before the handshake finished"),
    FRAME_TIMEOUT(
            "connections.closed",
            "frame_timeout",
            true,
            "connections closed: a frame stalled half-read, or answers stopped, for tcp.frameTimeoutMs"),
    IDLE_CLOSED("connections.closed", "idle", false, "connections closed after carrying nothing for tcp.idleTimeoutMs"),
    MALFORMED_FRAMES(
            "connections.closed", "malformed", true, "authenticated connections closed for breaking the protocol"),
    REFUSED_UNKNOWN_KEY("refusals", "unknown_key", true, "requests refused: unknown remote key"),
    REFUSED_OUT_OF_BOUNDS("refusals", "out_of_bounds", true, "requests refused: outside the region"),
    REFUSED_DEREGISTERED(
            "refusals", "region_deregistered", true, "requests refused: region deregistered while the payload arrived"),
    REFUSED_NO_RECEIVE_BUFFER(
            "refusals", "no_receive_buffer", true, "sends refused: no posted receive buffer large enough"),
    REFUSED_MALFORMED("refusals", "malformed", true, "requests refused: flags this version does not know"),
    REFUSED_IMM_NOT_ADMITTED(
            "refusals",
            "imm_not_admitted",
            true,
            "writes refused: the engine credits its bound of distinct unexpected imms"),
    REFUSED_NOT_WRITABLE("refusals", "not_writable", true, "writes refused: the region was registered read-only"),
    REFUSED_NOT_READABLE("refusals", "not_readable", true, "reads refused: the region was registered write-only"),
    PEERS_EVICTED(
            "peers.evicted", "max_peers", false, "idle, disconnected peers forgotten to stay within tcp.maxPeers"),
    BACK_PRESSURE(
            "refusals",
            "back_pressure",
            false,
            "requests refused: tcp.maxQueuedPerPeer requests to that peer were queued or unanswered; reads not served:"
                    + " no room for a connection back to the reader (tcp.maxPeers)"),
    PEERS_RESTARTED(
            "peers.restarted",
            "new_incarnation",
            false,
            "peers that proved a new incarnation id: the peer restarted, its earlier connection's requests failed");

    private final String category;
    private final String reason;
    private final boolean warns;
    private final String description;

    TcpCounter(final String category, final String reason, final boolean warns, final String description) {
        this.category = category;
        this.reason = reason;
        this.warns = warns;
        this.description = description;
    }

    /** The transport-neutral category it is published under ({@link dev.transferengine.TransportEvent}). */
    String category() {
        return category;
    }

    /** The reason tag it is published with: stable, lower case. */
    String reason() {
        return reason;
    }

    /** True if an event is worth a (rate-limited) WARN line; false for the ordinary ones, logged at DEBUG. */
    boolean warns() {
        return warns;
    }

    String description() {
        return description;
    }

    /** The counter of requests refused for {@code refusal}. */
    static TcpCounter of(final TcpRefusal refusal) {
        return switch (refusal) {
            case UNKNOWN_KEY -> REFUSED_UNKNOWN_KEY;
            case OUT_OF_BOUNDS -> REFUSED_OUT_OF_BOUNDS;
            case REGION_DEREGISTERED -> REFUSED_DEREGISTERED;
            case NO_RECEIVE_BUFFER -> REFUSED_NO_RECEIVE_BUFFER;
            case MALFORMED -> REFUSED_MALFORMED;
            case IMM_NOT_ADMITTED -> REFUSED_IMM_NOT_ADMITTED;
            case NOT_WRITABLE -> REFUSED_NOT_WRITABLE;
            case NOT_READABLE -> REFUSED_NOT_READABLE;
            case NO_PEER_ROOM -> BACK_PRESSURE;
        };
    }
}
