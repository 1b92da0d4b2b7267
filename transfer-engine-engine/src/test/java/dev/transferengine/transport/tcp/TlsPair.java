package dev.transferengine.transport.tcp;

import dev.transferengine.test.TlsFixture;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two real {@link TcpTls} ends over loopback, a client and a server, with a {@link TlsRelay} between them that can
 * flip or cut the client's stream; TLS 1.3 with mutual authentication, as the transport configures it. Closing closes
 * both ends, their sockets and the relay.
 */
final class TlsPair implements AutoCloseable {

    /** What {@link #region} fills its bytes with: a byte still equal to it was not written. */
    static final byte UNTOUCHED = 0x5A;

    private static final SSLContext CONTEXT = TlsFixture.trusted().context();

    final TlsRelay relay;
    final TcpTls client;
    final TcpTls server;
    private final SocketChannel dialled;
    private final SocketChannel accepted;

    /**
     * Connects a client and a server through a new relay; the handshake is not run yet ({@link #handshake}).
     *
     * @param clientOffersEngineRecords whether the client's engine offers engine records ({@link TcpRecords#offer})
     * @param serverOffersEngineRecords whether the server's does
     */
    TlsPair(final boolean clientOffersEngineRecords, final boolean serverOffersEngineRecords) throws IOException {
        final ServerSocketChannel acceptor =
                ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        relay = new TlsRelay(acceptor.getLocalAddress());
        dialled = SocketChannel.open(relay.address());
        accepted = acceptor.accept();
        acceptor.close();
        dialled.configureBlocking(false);
        accepted.configureBlocking(false);
        client = new TcpTls(dialled, engine(true, clientOffersEngineRecords));
        server = new TcpTls(accepted, engine(false, serverOffersEngineRecords));
    }

    /** Runs the TLS handshake of both ends on this thread, failing the test if it is not done by the deadline. */
    void handshake(final long deadlineNanos) throws IOException {
        final ByteBuffer nothing = ByteBuffer.allocate(0);
        final long deadline = System.nanoTime() + deadlineNanos;
        while (client.handshaking() || server.handshaking()) {
            assertThat(System.nanoTime() - deadline).as("handshake in time").isNegative();
            client.flush();
            server.flush();
            client.read(nothing);
            server.read(nothing);
            Thread.onSpinWait();
        }
    }

    /** Pipelines both ends as the connections do: the client first. */
    void pipeline() throws IOException {
        client.pipeline(TcpThreads.FACTORY, "te-tls-io test client");
        server.pipeline(TcpThreads.FACTORY, "te-tls-io test server");
    }

    /**
     * A destination like a registered region: off the heap, every byte {@link #UNTOUCHED} until written.
     *
     * @param length its bytes
     * @return the region, positioned at 0
     */
    static ByteBuffer region(final int length) {
        final ByteBuffer region = ByteBuffer.allocateDirect(length);
        while (region.hasRemaining()) {
            region.put(UNTOUCHED);
        }
        return region.clear();
    }

    private static SSLEngine engine(final boolean clientMode, final boolean offersEngineRecords) {
        final SSLEngine engine = CONTEXT.createSSLEngine();
        engine.setUseClientMode(clientMode);
        engine.setNeedClientAuth(!clientMode);
        engine.setEnabledProtocols(new String[] {"TLSv1.3"});
        TcpTlsEngines.enableCipherSuites(engine, List.of());
        if (offersEngineRecords) {
            TcpRecords.offer(engine);
        }
        return engine;
    }

    @Override
    public void close() throws IOException {
        client.close();
        server.close();
        dialled.close();
        accepted.close();
        relay.close();
    }
}
