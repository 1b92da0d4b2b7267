package dev.transferengine.autoconfigure;

import dev.transferengine.TransferEngine;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.SslBundles;

/**
 * How the auto-configured engine's tcp connections are protected, as its properties set it up: shown in the start-up
 * line, in health details and by the {@code transferengine} endpoint, so that an operator sees at a glance whether a
 * node runs with TLS and with which key. Never holds or shows a key.
 */
public final class TransferEngineSecurity {

    private final TransferEngine engine;
    private final String tls;
    private final String key;

    private TransferEngineSecurity(final TransferEngine engine, final String tls, final String key) {
        this.engine = engine;
        this.tls = tls;
        this.key = key;
    }

    /**
     * The TLS mode: {@code off}, {@code server} (the acceptor proves itself; no client certificates) or
     * {@code mutual} (both sides present certificates, the bundle has a trust store).
     *
     * @return one of the names above
     */
    public String tls() {
        return tls;
    }

    /**
     * The cluster-key mode: {@code configured} (one key), {@code rotating} (two: the new one first),
     * {@code public-loopback} (no key: the public key that only serves loopback) or {@code insecure} (no key,
     * {@code transfer-engine.tcp.insecure=true}: anyone who reaches the port can write).
     *
     * @return one of the names above
     */
    public String key() {
        return key;
    }

    /**
     * Whether this describes {@code candidate}, the very engine object (another engine of the application, one it
     * built itself, has no description).
     *
     * @param candidate an engine of the application
     * @return whether it is the auto-configured engine this describes
     */
    @SuppressWarnings("ReferenceEquality") // identity on purpose: this engine, not an equal one
    public boolean describes(final TransferEngine candidate) {
        return candidate == engine;
    }

    /** {@code TLS mutual, key rotating}. */
    @Override
    public String toString() {
        return "TLS " + tls + ", key " + key;
    }

    /** The modes {@code properties} give {@code engine}; the properties were checked when the engine was built. */
    static TransferEngineSecurity of(
            final TransferEngine engine,
            final TransferEngineProperties properties,
            final @Nullable SslBundles bundles) {
        final TransferEngineProperties.Tcp tcp = properties.getTcp();
        final String bundleName = tcp.getSsl().getBundle();
        final String tls;
        if (bundleName == null || bundleName.isBlank() || bundles == null) {
            tls = "off";
        } else {
            tls = bundles.getBundle(bundleName).getStores().getTrustStore() != null ? "mutual" : "server";
        }
        return new TransferEngineSecurity(engine, tls, keyMode(tcp, properties.getBindAddress()));
    }

    private static String keyMode(final TransferEngineProperties.Tcp tcp, final String bindAddress) {
        final int keys = keyCount(tcp);
        if (keys > 1) {
            return "rotating";
        }
        if (keys == 1) {
            return "configured";
        }
        return tcp.isInsecure() && !isLoopback(bindAddress) ? "insecure" : "public-loopback";
    }

    private static int keyCount(final TransferEngineProperties.Tcp tcp) {
        final String inline = tcp.getClusterKey();
        if (inline != null && !inline.isBlank()) {
            return inline.split(",", -1).length;
        }
        final String file = tcp.getClusterKeyFile();
        if (file == null) {
            return 0;
        }
        try {
            return (int) Files.readAllLines(Path.of(file), StandardCharsets.UTF_8).stream()
                    .filter(line -> !line.isBlank())
                    .count();
        } catch (final IOException e) {
            return 0; // the engine read it a moment ago; a file gone since is not this description's concern
        }
    }

    private static boolean isLoopback(final String bindAddress) {
        try {
            return InetAddress.getByName(bindAddress).isLoopbackAddress();
        } catch (final UnknownHostException e) {
            return false;
        }
    }
}
