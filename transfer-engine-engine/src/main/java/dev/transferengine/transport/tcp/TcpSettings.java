package dev.transferengine.transport.tcp;

import dev.transferengine.EngineConfig;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The tcp transport's options, parsed and checked once. Every bound has a default that a single-host test and a
 * production cluster both live with; {@code docs/security.md} lists them.
 *
 * @param socketBufferBytes      SO_SNDBUF and SO_RCVBUF per socket; 0 leaves them to the kernel
 * @param maxInboundConnections  connections peers may hold open to one NIC, handshaking or not
 * @param maxPeers               peers one NIC keeps an entry for; idle, disconnected ones are evicted beyond it
 * @param maxQueuedPerPeer       requests queued or awaiting their answer per peer; more fail with back-pressure
 * @param handshakeTimeoutNanos  how long a connection may take to finish the handshake
 * @param frameTimeoutNanos      how long a frame may stall half-read, or requests wait without a byte of answer
 * @param idleTimeoutNanos       how long a connection may carry nothing before it is closed; 0 never
 * @param keys                   accepted cluster keys, the first proving this side; empty for none
 * @param insecure               whether a NIC may listen on a non-loopback address without a key
 */
record TcpSettings(
        int socketBufferBytes,
        int maxInboundConnections,
        int maxPeers,
        int maxQueuedPerPeer,
        long handshakeTimeoutNanos,
        long frameTimeoutNanos,
        long idleTimeoutNanos,
        List<byte[]> keys,
        boolean insecure) {

    static final String SOCKET_BUFFER = "tcp.socketBufferBytes";
    static final String MAX_INBOUND_CONNECTIONS = "tcp.maxInboundConnections";
    static final String MAX_PEERS = "tcp.maxPeers";
    static final String MAX_QUEUED_PER_PEER = "tcp.maxQueuedPerPeer";
    static final String HANDSHAKE_TIMEOUT = "tcp.handshakeTimeoutMs";
    static final String FRAME_TIMEOUT = "tcp.frameTimeoutMs";
    static final String IDLE_TIMEOUT = "tcp.idleTimeoutMs";
    static final String CLUSTER_KEY = "tcp.clusterKey";
    static final String CLUSTER_KEY_FILE = "tcp.clusterKeyFile";
    static final String INSECURE = "tcp.insecure";

    /** Shortest key accepted, in bytes: a shorter one is guessable. */
    static final int MIN_KEY_BYTES = 16;

    private static final long MILLIS = 1_000_000L;

    /**
     * Reads the options.
     *
     * @throws IllegalArgumentException naming the option that is wrong and why
     */
    static TcpSettings of(final EngineConfig config) {
        return new TcpSettings(
                (int) number(config, SOCKET_BUFFER, 4 << 20, 0),
                (int) number(config, MAX_INBOUND_CONNECTIONS, 1024, 1),
                (int) number(config, MAX_PEERS, 4096, 1),
                (int) number(config, MAX_QUEUED_PER_PEER, 16_384, 1),
                number(config, HANDSHAKE_TIMEOUT, 10_000, 1) * MILLIS,
                number(config, FRAME_TIMEOUT, 30_000, 1) * MILLIS,
                number(config, IDLE_TIMEOUT, 600_000, 0) * MILLIS,
                keys(config),
                Boolean.parseBoolean(config.option(INSECURE, "false").strip()));
    }

    private static long number(final EngineConfig config, final String option, final long fallback, final long min) {
        final String value = config.option(option, Long.toString(fallback)).strip();
        final long parsed;
        try {
            parsed = Long.parseLong(value);
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException(option + " is not a whole number: '" + value + "'", e);
        }
        if (parsed < min || parsed > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    option + " must be between " + min + " and " + Integer.MAX_VALUE + ": " + value);
        }
        return parsed;
    }

    /** The keys of {@value #CLUSTER_KEY} (comma-separated) or of {@value #CLUSTER_KEY_FILE} (one a line). */
    private static List<byte[]> keys(final EngineConfig config) {
        final String inline = config.option(CLUSTER_KEY, "").strip();
        final String file = config.option(CLUSTER_KEY_FILE, "").strip();
        if (!inline.isEmpty() && !file.isEmpty()) {
            throw new IllegalArgumentException("set " + CLUSTER_KEY + " or " + CLUSTER_KEY_FILE + ", not both");
        }
        final List<String> texts;
        if (!file.isEmpty()) {
            try {
                texts = Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
            } catch (final IOException e) {
                throw new IllegalArgumentException(CLUSTER_KEY_FILE + ": cannot read " + file + ": " + e, e);
            }
        } else {
            texts = List.of(inline.split(","));
        }
        final List<byte[]> keys = new ArrayList<>();
        for (final String text : texts) {
            final byte[] key = text.strip().getBytes(StandardCharsets.UTF_8);
            if (key.length == 0) {
                continue;
            }
            if (key.length < MIN_KEY_BYTES) {
                throw new IllegalArgumentException("a cluster key needs at least " + MIN_KEY_BYTES + " bytes, got "
                        + key.length + " (from " + (file.isEmpty() ? CLUSTER_KEY : file) + ")");
            }
            keys.add(key);
        }
        if (keys.size() > 2) {
            throw new IllegalArgumentException("at most two cluster keys (the current one first, then the one being "
                    + "rotated out), got " + keys.size());
        }
        return List.copyOf(keys);
    }
}
