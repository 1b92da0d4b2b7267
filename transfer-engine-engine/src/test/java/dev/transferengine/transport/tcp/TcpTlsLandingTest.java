package dev.transferengine.transport.tcp;

import dev.transferengine.test.TlsFixture;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.crypto.AEADBadTagException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Where decrypted bytes land (docs/security.md, "TLS"): records are decrypted straight into the destination while it
 * has room for a whole record, and a record lands only once it authenticated. Two real {@link TcpTls} ends over
 * loopback with a relay between them that can flip one byte of the encrypted stream, unpipelined and pipelined.
 */
class TcpTlsLandingTest {

    private static final SSLContext CONTEXT = TlsFixture.trusted().context();
    /**
     * Plaintext per full TLS 1.3 record as JSSE cuts them: the record's protected part (plaintext, content type,
     * 16-byte AES-GCM tag) stays within 2^14 bytes.
     */
    private static final int RECORD = 16_384 - 1 - 16;
    /** A full record on the wire: the 5-byte header and its protected part. */
    private static final int WIRE_RECORD = 5 + 16_384;

    private static final byte UNTOUCHED = 0x5A;
    private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(30);

    private @Nullable TlsRelay relay;
    private @Nullable TcpTls client;
    private @Nullable TcpTls server;
    private final List<SocketChannel> sockets = new ArrayList<>();

    @AfterEach
    void close() throws IOException {
        for (final TcpTls end : new TcpTls[] {client, server}) {
            if (end != null) {
                end.close();
            }
        }
        for (final SocketChannel socket : sockets) {
            socket.close();
        }
        if (relay != null) {
            relay.close();
        }
    }

    @ParameterizedTest(name = "pipelined {0}")
    @ValueSource(booleans = {false, true})
    void aWriteOfManyRecordsLandsByteExact(final boolean pipelined) throws Exception {
        connect(pipelined);
        final byte[] payload = payload(64 * RECORD + 1000);
        final ByteBuffer region = region(payload.length);

        final Throwable failure = move(payload, region);

        assertThat(failure).isNull();
        assertThat(region.position()).isEqualTo(payload.length);
        assertThat(bytes(region, 0, payload.length)).isEqualTo(payload);
    }

    @ParameterizedTest(name = "pipelined {0}")
    @ValueSource(booleans = {false, true})
    void aTamperedRecordLandsNothingAndFailsTheRead(final boolean pipelined) throws Exception {
        connect(pipelined);
        final byte[] payload = payload(64 * RECORD);
        final ByteBuffer region = region(payload.length);
        final int badRecord = 6;
        requireNonNull(relay).flipFromNow(badRecord * (long) WIRE_RECORD + 1000);

        final Throwable failure = move(payload, region);

        assertThat(failure).isInstanceOf(SSLException.class).hasRootCauseInstanceOf(AEADBadTagException.class);
        // The records before the tampered one authenticated and landed; nothing of it or after it did.
        final int landed = badRecord * RECORD;
        assertThat(region.position()).isEqualTo(landed);
        assertThat(bytes(region, 0, landed)).isEqualTo(Arrays.copyOf(payload, landed));
        final byte[] rest = bytes(region, landed, payload.length - landed);
        final byte[] untouched = new byte[rest.length];
        Arrays.fill(untouched, UNTOUCHED);
        assertThat(rest).isEqualTo(untouched);
    }

    /** Writes {@code payload} on the client and reads it into {@code region} on the server; the read's failure. */
    private @Nullable Throwable move(final byte[] payload, final ByteBuffer region) throws IOException {
        final TcpTls writer = requireNonNull(client);
        final TcpTls reader = requireNonNull(server);
        final ByteBuffer[] source = {ByteBuffer.wrap(payload)};
        final ByteBuffer[] destination = {region};
        final long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (region.hasRemaining()) {
            assertThat(System.nanoTime() - deadline).as("moved in time").isNegative();
            if (source[0].hasRemaining() || writer.pendingOutput()) {
                writer.write(source);
                writer.flush();
            }
            final Throwable failure = catchThrowable(() -> reader.read(destination));
            if (failure != null) {
                return failure;
            }
            Thread.onSpinWait();
        }
        return null;
    }

    private void connect(final boolean pipelined) throws IOException {
        final ServerSocketChannel acceptor =
                ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        final TlsRelay started = new TlsRelay(acceptor.getLocalAddress());
        relay = started;
        final SocketChannel dialled = SocketChannel.open(started.address());
        final SocketChannel accepted = acceptor.accept();
        acceptor.close();
        sockets.add(dialled);
        sockets.add(accepted);
        dialled.configureBlocking(false);
        accepted.configureBlocking(false);
        final TcpTls dialler = new TcpTls(dialled, engine(true));
        final TcpTls acceptorSide = new TcpTls(accepted, engine(false));
        client = dialler;
        server = acceptorSide;
        final ByteBuffer nothing = ByteBuffer.allocate(0);
        final long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (dialler.handshaking() || acceptorSide.handshaking()) {
            assertThat(System.nanoTime() - deadline).as("handshake in time").isNegative();
            dialler.flush();
            acceptorSide.flush();
            dialler.read(nothing);
            acceptorSide.read(nothing);
            Thread.onSpinWait();
        }
        if (pipelined) {
            dialler.pipeline(TcpThreads.FACTORY, "te-tls-io test client");
            acceptorSide.pipeline(TcpThreads.FACTORY, "te-tls-io test server");
        }
    }

    private static SSLEngine engine(final boolean client) {
        final SSLEngine engine = CONTEXT.createSSLEngine();
        engine.setUseClientMode(client);
        engine.setNeedClientAuth(!client);
        engine.setEnabledProtocols(new String[] {"TLSv1.3"});
        TcpTlsEngines.enableCipherSuites(engine, List.of());
        return engine;
    }

    private static byte[] payload(final int length) {
        final byte[] payload = new byte[length];
        new Random(7).nextBytes(payload);
        return payload;
    }

    /** A destination like a registered region: off the heap, every byte {@link #UNTOUCHED} until written. */
    private static ByteBuffer region(final int length) {
        final ByteBuffer region = ByteBuffer.allocateDirect(length);
        while (region.hasRemaining()) {
            region.put(UNTOUCHED);
        }
        return region.clear();
    }

    private static byte[] bytes(final ByteBuffer region, final int from, final int length) {
        final byte[] copy = new byte[length];
        region.get(from, copy);
        return copy;
    }

    private static <T> T requireNonNull(final @Nullable T value) {
        return Objects.requireNonNull(value);
    }
}
