package dev.transferengine.transport.tcp;

import dev.transferengine.EngineConfig;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * The tcp transport's options, parsed and checked once. Every bound has a default that a single-host test and a
 * production cluster both live with; {@code docs/security.md} lists them.
 *
 * @param socketBufferBytes      SO_SNDBUF and SO_RCVBUF per socket; 0 (the default) leaves them to the kernel's
 *                              auto-tuning
 * @param maxInboundConnections  authenticated connections peers may hold open to one NIC
 * @param maxPendingHandshakes   accepted sockets one NIC runs a handshake on at once; more are closed at once
 * @param maxHandshakesPerSource of those, how many one source address may hold
 * @param maxPeers               peers one NIC keeps an entry for; idle, disconnected ones are evicted beyond it
 * @param maxQueuedPerPeer       requests queued or awaiting their answer per peer; a new one beyond fails with
 *                              back-pressure at its first piece (an accepted request's pages are never refused)
 * @param handshakeTimeoutNanos  how long a connection may take to finish the handshake
 * @param frameTimeoutNanos      how long a frame may stall half-read, or requests wait without a byte of answer
 * @param idleTimeoutNanos       how long a connection may carry nothing before it is closed; 0 never
 * @param keys                   accepted cluster keys, decoded, the first proving this side; empty for none
 * @param insecure               whether a NIC may listen on a non-loopback address without a key
 * @param tlsEngineRecords       whether TLS connections offer the engine's record layer ({@link TcpRecords}):
 *                              {@code tcp.tlsRecords=engine} (the default) or {@code jsse} (JSSE's records only)
 * @param reverseAckNanos        how long the ACK of a peer's request may wait for a request of ours to that peer to
 *                              carry it ({@link TcpFrame#REVERSE_ACK}); 0 turns reverse ACKs off, both ways
 * @param pageTables             whether this side announces {@link TcpFrame#FEATURE_PAGE_TABLE}
 *                              ({@code tcp.pageTables}, default true): a paged write's pages then travel as PAGES
 *                              frames, admitted whole; false makes it speak as an engine without them (WRITEV)
 * @param readFailures           whether this side announces {@link TcpFrame#FEATURE_READ_FAILED}
 *                              ({@code tcp.readFailures}, default true): a read its owner stops serving part-way then
 *                              fails at once; false makes it speak as an engine without them (the read waits for its
 *                              operation's deadline)
 */
record TcpSettings(
        int socketBufferBytes,
        int maxInboundConnections,
        int maxPendingHandshakes,
        int maxHandshakesPerSource,
        int maxPeers,
        int maxQueuedPerPeer,
        long handshakeTimeoutNanos,
        long frameTimeoutNanos,
        long idleTimeoutNanos,
        List<byte[]> keys,
        boolean insecure,
        boolean tlsEngineRecords,
        long reverseAckNanos,
        boolean pageTables,
        boolean readFailures) {

    static final String SOCKET_BUFFER = "tcp.socketBufferBytes";
    static final String MAX_INBOUND_CONNECTIONS = "tcp.maxInboundConnections";
    static final String MAX_PENDING_HANDSHAKES = "tcp.maxPendingHandshakes";
    static final String MAX_HANDSHAKES_PER_SOURCE = "tcp.maxHandshakesPerSource";
    static final String MAX_PEERS = "tcp.maxPeers";
    static final String MAX_QUEUED_PER_PEER = "tcp.maxQueuedPerPeer";
    static final String HANDSHAKE_TIMEOUT = "tcp.handshakeTimeoutMs";
    static final String FRAME_TIMEOUT = "tcp.frameTimeoutMs";
    static final String IDLE_TIMEOUT = "tcp.idleTimeoutMs";
    static final String CLUSTER_KEY = "tcp.clusterKey";
    static final String CLUSTER_KEY_FILE = "tcp.clusterKeyFile";
    static final String INSECURE = "tcp.insecure";
    static final String TLS_RECORDS = "tcp.tlsRecords";
    static final String REVERSE_ACK = "tcp.reverseAckMicros";
    static final String PAGE_TABLES = "tcp.pageTables";
    static final String READ_FAILURES = "tcp.readFailures";

    /**
     * Fewest bytes a key decodes to. Every connector sees an HMAC made with the key, so a key must withstand offline
     * guessing: 32 random bytes (2^256 candidates) do; a phrase does not (issue 16, item 4).
     */
    static final int MIN_KEY_BYTES = 32;
    /** Fewest distinct byte values in a key: 32 random bytes have about 30; a repeated pattern far fewer. */
    private static final int MIN_DISTINCT_KEY_BYTES = 16;

    private static final long MILLIS = 1_000_000L;
    /** Heap a TLS handshake holds before it authenticates, with margin. */
    private static final long TLS_HANDSHAKE_BYTES = 96 * 1024;
    /** Heap an authenticated TLS connection with engine records holds at its busiest, with margin. */
    private static final long TLS_CONNECTION_BYTES = 2560 * 1024;
    /** Heap an authenticated TLS connection with JSSE's records holds at its busiest, with margin. */
    private static final long JSSE_CONNECTION_BYTES = 1280 * 1024;
    /** Heap a plain handshake holds before it authenticates, with margin. */
    private static final long PLAIN_HANDSHAKE_BYTES = 4 * 1024;

    private static final Pattern HEX = Pattern.compile("[0-9a-fA-F]+");
    private static final Pattern BASE64 = Pattern.compile("[A-Za-z0-9+/_-]+={0,2}");

    /**
     * Reads the options.
     *
     * @throws IllegalArgumentException naming the option that is wrong and why
     */
    static TcpSettings of(final EngineConfig config) {
        final long pending = number(
                config,
                MAX_PENDING_HANDSHAKES,
                defaultPendingHandshakes(Runtime.getRuntime().maxMemory(), config),
                1);
        return new TcpSettings(
                (int) number(config, SOCKET_BUFFER, 0, 0),
                (int) number(
                        config,
                        MAX_INBOUND_CONNECTIONS,
                        defaultInboundConnections(Runtime.getRuntime().maxMemory(), config),
                        1),
                (int) pending,
                (int) number(config, MAX_HANDSHAKES_PER_SOURCE, Math.max(4, pending / 4), 1),
                (int) number(config, MAX_PEERS, 4096, 1),
                (int) number(config, MAX_QUEUED_PER_PEER, 16_384, 1),
                number(config, HANDSHAKE_TIMEOUT, 10_000, 1) * MILLIS,
                number(config, FRAME_TIMEOUT, 30_000, 1) * MILLIS,
                number(config, IDLE_TIMEOUT, 600_000, 0) * MILLIS,
                keys(config),
                Boolean.parseBoolean(config.option(INSECURE, "false").strip()),
                tlsEngineRecords(config),
                number(config, REVERSE_ACK, 20, 0) * 1_000L,
                flag(config, PAGE_TABLES, true),
                flag(config, READ_FAILURES, true));
    }

    private static boolean flag(final EngineConfig config, final String option, final boolean fallback) {
        final String value = config.option(option, Boolean.toString(fallback)).strip();
        return switch (value) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(option + " must be 'true' or 'false': '" + value + "'");
        };
    }

    private static boolean tlsEngineRecords(final EngineConfig config) {
        final String value = config.option(TLS_RECORDS, "engine").strip();
        return switch (value) {
            case "engine" -> true;
            case "jsse" -> false;
            default -> throw new IllegalArgumentException(TLS_RECORDS + " must be 'engine' or 'jsse': '" + value + "'");
        };
    }

    /**
     * Unfinished handshakes may hold an eighth of the heap: a TLS one holds an {@code SSLEngine} and three record
     * buffers (about {@value #TLS_HANDSHAKE_BYTES} bytes; about 900 of them ran a 64 MiB heap out of memory), a plain
     * one two small buffers. 16 to 1024.
     */
    static long defaultPendingHandshakes(final long maxHeapBytes, final EngineConfig config) {
        final long each = config.tls() == null ? PLAIN_HANDSHAKE_BYTES : TLS_HANDSHAKE_BYTES;
        return Math.clamp(maxHeapBytes / 8 / each, 16, 1024);
    }

    /**
     * Authenticated connections may hold a quarter of the heap at their worst: a TLS one with engine records holds up
     * to {@link TcpTlsPipe#BUFFERS} buffers of {@value TcpRecords#BUFFER} bytes per direction once busy, 2 MiB, with
     * its {@code SSLEngine} and frame buffers about {@value #TLS_CONNECTION_BYTES} bytes (issue 16 items 2 and 6:
     * about 20 of them, members' connections held open, ran a 64 MiB heap out of memory while 1024 were allowed).
     * With JSSE's records the buffers are of eight TLS records, about {@value #JSSE_CONNECTION_BYTES} bytes in all
     * (40 of them held 55 MB of a 64 MiB heap); plain connections hold little: 1024 for them, as before. 4 to 1024.
     */
    static long defaultInboundConnections(final long maxHeapBytes, final EngineConfig config) {
        if (config.tls() == null) {
            return 1024;
        }
        final long each = tlsEngineRecords(config) ? TLS_CONNECTION_BYTES : JSSE_CONNECTION_BYTES;
        return Math.clamp(maxHeapBytes / 4 / each, 4, 1024);
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
        final String source = file.isEmpty() ? CLUSTER_KEY : CLUSTER_KEY_FILE + " " + file;
        final List<byte[]> keys = new ArrayList<>();
        for (final String text : texts) {
            if (!text.isBlank()) {
                keys.add(decodeKey(text.strip(), source));
            }
        }
        if (!file.isEmpty() && keys.isEmpty()) {
            // An empty file is a deployment mistake (a secret that did not mount), never a request for the public key.
            throw new IllegalArgumentException(CLUSTER_KEY_FILE + ": " + file + " holds no key");
        }
        if (keys.size() > 2) {
            throw new IllegalArgumentException("at most two cluster keys (the current one first, then the one being "
                    + "rotated out), got " + keys.size());
        }
        return List.copyOf(keys);
    }

    /**
     * The key bytes {@code text} writes in hex (64 or more hex digits) or base64 (standard or URL-safe, padded or
     * not).
     *
     * @throws IllegalArgumentException if it is neither, decodes to fewer than {@value #MIN_KEY_BYTES} bytes or is
     *     plainly not random; the message never shows the key
     */
    static byte[] decodeKey(final String text, final String source) {
        final byte[] key = decoded(text);
        final String advice = "a cluster key must be at least " + MIN_KEY_BYTES + " random bytes written in base64 or "
                + "hex, e.g. from 'openssl rand -base64 32' (a phrase falls to offline guessing; docs/security.md)";
        if (key == null) {
            throw new IllegalArgumentException(
                    source + ": a key of " + text.length() + " characters is neither hex nor base64; " + advice);
        }
        if (key.length < MIN_KEY_BYTES) {
            throw new IllegalArgumentException(source + ": a key decodes to " + key.length + " bytes, fewer than "
                    + MIN_KEY_BYTES + "; " + advice);
        }
        final boolean[] seen = new boolean[256];
        int distinct = 0;
        for (final byte b : key) {
            if (!seen[b & 0xFF]) {
                seen[b & 0xFF] = true;
                distinct++;
            }
        }
        if (distinct < MIN_DISTINCT_KEY_BYTES) {
            throw new IllegalArgumentException(source + ": a key of " + key.length + " bytes has only " + distinct
                    + " distinct byte values, so it is not random; " + advice);
        }
        return key;
    }

    private static byte @Nullable [] decoded(final String text) {
        if (text.length() % 2 == 0 && HEX.matcher(text).matches()) {
            return HexFormat.of().parseHex(text);
        }
        if (!BASE64.matcher(text).matches()) {
            return null;
        }
        final String standard = text.replace('-', '+').replace('_', '/');
        try {
            return Base64.getDecoder().decode(standard.length() % 4 == 0 ? standard : pad(standard));
        } catch (final IllegalArgumentException e) {
            return null;
        }
    }

    private static String pad(final String unpadded) {
        return unpadded + "=".repeat((4 - unpadded.length() % 4) % 4);
    }
}
