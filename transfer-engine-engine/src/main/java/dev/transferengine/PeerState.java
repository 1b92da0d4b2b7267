package dev.transferengine;

/** Where our NIC stands with a peer NIC, as reported in {@link PeerInfo}. */
public enum PeerState {
    /** Known; no connection opened from our side (the peer may have connected to us). */
    IDLE,
    /** A connection from our side is being opened or handshaken. */
    CONNECTING,
    /** A connection from our side carries requests. */
    CONNECTED,
    /** The last connection failed ({@link PeerInfo#lastError()} says why); the next request connects again. */
    UNREACHABLE
}
