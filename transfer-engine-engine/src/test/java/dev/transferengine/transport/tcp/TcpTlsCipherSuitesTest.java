package dev.transferengine.transport.tcp;

import dev.transferengine.test.TlsFixture;

import java.nio.ByteBuffer;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The cipher suite order TLS connections use: AES-128-GCM first by default, a configured list as given. */
class TcpTlsCipherSuitesTest {

    private static final SSLContext CONTEXT = TlsFixture.trusted().context();

    @Test
    void withNoSuitesConfiguredBothSidesAgreeOnAes128Gcm() throws SSLException {
        final SSLEngine client = engine(true, List.of());
        final SSLEngine server = engine(false, List.of());

        assertThat(client.getEnabledCipherSuites()[0]).isEqualTo(TcpTlsEngines.FAST_SUITE);
        assertThat(List.of(client.getEnabledCipherSuites()))
                .containsExactlyInAnyOrder(CONTEXT.createSSLEngine().getEnabledCipherSuites());
        assertThat(handshake(client, server)).isEqualTo("TLS_AES_128_GCM_SHA256");
    }

    @Test
    void configuredSuitesAreEnabledInTheirOrderAndTheAcceptorsOrderDecides() throws SSLException {
        final List<String> aes256First = List.of("TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256");
        final SSLEngine client = engine(true, List.of());
        final SSLEngine server = engine(false, aes256First);

        assertThat(server.getEnabledCipherSuites()).containsExactly(aes256First.toArray(String[]::new));
        assertThat(handshake(client, server)).isEqualTo("TLS_AES_256_GCM_SHA384");
    }

    private static SSLEngine engine(final boolean client, final List<String> suites) {
        final SSLEngine engine = CONTEXT.createSSLEngine();
        engine.setUseClientMode(client);
        engine.setEnabledProtocols(new String[] {"TLSv1.3"});
        TcpTlsEngines.enableCipherSuites(engine, suites);
        return engine;
    }

    /** Runs the TLS handshake of two engines through memory; the suite they agreed on. */
    private static String handshake(final SSLEngine client, final SSLEngine server) throws SSLException {
        final ByteBuffer toServer = ByteBuffer.allocate(client.getSession().getPacketBufferSize());
        final ByteBuffer toClient = ByteBuffer.allocate(server.getSession().getPacketBufferSize());
        final ByteBuffer app = ByteBuffer.allocate(client.getSession().getApplicationBufferSize());
        client.beginHandshake();
        server.beginHandshake();
        for (int step = 0; step < 100 && !(done(client) && done(server)); step++) {
            advance(client, toClient, toServer, app);
            advance(server, toServer, toClient, app);
        }
        assertThat(done(client) && done(server)).as("handshake finished").isTrue();
        assertThat(server.getSession().getCipherSuite())
                .isEqualTo(client.getSession().getCipherSuite());
        return client.getSession().getCipherSuite();
    }

    private static boolean done(final SSLEngine engine) {
        return engine.getHandshakeStatus() == HandshakeStatus.NOT_HANDSHAKING;
    }

    private static void advance(final SSLEngine engine, final ByteBuffer in, final ByteBuffer out, final ByteBuffer app)
            throws SSLException {
        switch (engine.getHandshakeStatus()) {
            case NEED_WRAP -> engine.wrap(ByteBuffer.allocate(0), out);
            case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                in.flip();
                app.clear();
                engine.unwrap(in, app);
                in.compact();
            }
            case NEED_TASK -> {
                Runnable task;
                while ((task = engine.getDelegatedTask()) != null) {
                    task.run();
                }
            }
            default -> {
                // nothing to do this step
            }
        }
    }
}
