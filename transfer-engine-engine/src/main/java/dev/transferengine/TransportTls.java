package dev.transferengine;

import java.util.List;
import java.util.Objects;
import javax.net.ssl.SSLContext;

/**
 * TLS for the connections of the tcp transport ({@link TransferEngineBuilder#tls(TransportTls)}). Every connection
 * then runs a TLS handshake before the cluster-key handshake, and every frame travels encrypted and authenticated.
 * The {@link SSLContext}'s key manager proves this engine, its trust manager decides which peers' certificates are
 * accepted; host names are not checked (peers are addressed by IP address), so trust a certificate authority of the
 * cluster only, not a public one.
 *
 * @param context        where engines, keys and trust come from; shared by every NIC
 * @param needClientAuth whether a connecting peer must present a certificate the trust manager accepts (mutual TLS)
 * @param protocols      protocols to enable, e.g. {@code TLSv1.3}; empty for the context's defaults
 * @param cipherSuites   cipher suites to enable; empty for the context's defaults
 */
public record TransportTls(
        SSLContext context, boolean needClientAuth, List<String> protocols, List<String> cipherSuites) {

    /**
     * Checks the context and copies the lists into immutable ones.
     *
     * @throws NullPointerException if an argument is null
     */
    public TransportTls {
        Objects.requireNonNull(context, "context");
        protocols = List.copyOf(protocols);
        cipherSuites = List.copyOf(cipherSuites);
    }

    /**
     * Mutual TLS with the context's default protocols and cipher suites: each side must present a certificate the
     * other trusts.
     *
     * @param context where keys and trust come from
     * @return the TLS settings, with {@code needClientAuth} on
     */
    public static TransportTls mutual(final SSLContext context) {
        return new TransportTls(context, true, List.of(), List.of());
    }
}
