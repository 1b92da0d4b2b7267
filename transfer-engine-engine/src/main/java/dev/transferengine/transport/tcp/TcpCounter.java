package dev.transferengine.transport.tcp;

/**
 * Events of one tcp NIC that a bound, the handshake or a check stopped: each is counted, and logged at most
 * once per {@link TcpCounters#LOG_INTERVAL_NANOS} per counter (the ordinary ones only at DEBUG). The names are stable: metrics publish them.
 */
enum TcpCounter {
    CONNECTIONS_REFUSED(true, "inbound connections closed at once: the NIC held tcp.maxInboundConnections already"),
    HANDSHAKE_VERSION(true, "handshakes refused: the peer speaks another wire protocol version"),
    HANDSHAKE_AUTH_FAILED(true, "handshakes refused: the peer's proof did not match any accepted cluster key"),
    HANDSHAKE_MALFORMED(true, "handshakes refused: malformed or unexpected frames before authentication"),
    HANDSHAKE_TIMEOUT(true, "handshakes not finished within tcp.handshakeTimeoutMs"),
    HANDSHAKE_CLOSED(true, "connections closed by the peer before the handshake finished"),
    FRAME_TIMEOUT(true, "connections closed: a frame stalled half-read, or answers stopped, for tcp.frameTimeoutMs"),
    IDLE_CLOSED(false, "connections closed after carrying nothing for tcp.idleTimeoutMs"),
    MALFORMED_FRAMES(true, "authenticated connections closed for breaking the protocol"),
    REFUSED_UNKNOWN_KEY(true, "requests refused: unknown remote key"),
    REFUSED_OUT_OF_BOUNDS(true, "requests refused: outside the region"),
    REFUSED_DEREGISTERED(true, "requests refused: region deregistered while the payload arrived"),
    REFUSED_NO_RECEIVE_BUFFER(true, "sends refused: no posted receive buffer large enough"),
    REFUSED_MALFORMED(true, "requests refused: flags this version does not know"),
    REFUSED_IMM_NOT_ADMITTED(true, "writes refused: the engine credits its bound of distinct unexpected imms"),
    PEERS_EVICTED(false, "idle, disconnected peers forgotten to stay within tcp.maxPeers"),
    BACK_PRESSURE(false, "requests refused: tcp.maxQueuedPerPeer requests to that peer were queued or unanswered");

    private final boolean warns;
    private final String description;

    TcpCounter(final boolean warns, final String description) {
        this.warns = warns;
        this.description = description;
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
        };
    }
}
