package dev.transferengine.transport.tcp;

import dev.transferengine.TransportTls;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLEngine;

import org.jspecify.annotations.Nullable;

/** Makes the {@link SSLEngine} of a new TLS connection from the NIC's {@link TransportTls}. */
final class TcpTlsEngines {

    /**
     * The cipher suite put first when the configuration names none: AES-128-GCM runs 10 AES rounds per block against
     * AES-256-GCM's 14, and AES-GCM is most of what a TLS connection's CPU time goes to (JSSE's default order puts
     * AES-256 first).
     */
    static final String FAST_SUITE = "TLS_AES_128_GCM_SHA256";

    private TcpTlsEngines() {}

    /**
     * The engine of a connection to {@code peer} (null: this side accepts), offering engine records
     * ({@link TcpRecords}) if {@code engineRecords}.
     */
    static SSLEngine create(
            final TransportTls config, final @Nullable InetSocketAddress peer, final boolean engineRecords) {
        final SSLEngine engine = peer == null
                ? config.context().createSSLEngine()
                : config.context().createSSLEngine(peer.getHostString(), peer.getPort());
        engine.setUseClientMode(peer != null);
        if (peer == null) {
            engine.setNeedClientAuth(config.needClientAuth());
        }
        if (!config.protocols().isEmpty()) {
            engine.setEnabledProtocols(config.protocols().toArray(String[]::new));
        }
        enableCipherSuites(engine, config.cipherSuites());
        if (engineRecords) {
            TcpRecords.offer(engine);
        }
        return engine;
    }

    /**
     * Enables {@code configured} in its order, or, if it is empty, the engine's defaults with {@value #FAST_SUITE}
     * first. The accepting side's order decides (JSSE honours the server's preference), so both sides order alike.
     */
    static void enableCipherSuites(final SSLEngine engine, final List<String> configured) {
        if (!configured.isEmpty()) {
            engine.setEnabledCipherSuites(configured.toArray(String[]::new));
            return;
        }
        final String[] defaults = engine.getEnabledCipherSuites();
        final List<String> ordered = new ArrayList<>(defaults.length);
        for (final String suite : defaults) {
            if (suite.equals(FAST_SUITE)) {
                ordered.addFirst(suite);
            } else {
                ordered.add(suite);
            }
        }
        engine.setEnabledCipherSuites(ordered.toArray(String[]::new));
    }
}
