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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Engine records (docs/security.md, "Engine records") between two real {@link TcpTls} ends over loopback, with a
 * relay between them that can flip or cut the client's stream: the switch after bytes sent through JSSE, byte-exact
 * writes of many sizes both ways, a tampered or cut record landing nothing of itself, and a peer that does not offer
 * engine records keeping JSSE's.
 */
class TcpTlsRecordsTest {

    private static final SSLContext CONTEXT = TlsFixture.trusted().context();
    private static final byte UNTOUCHED = 0x5A;
    private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final Random random = new Random(3);
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

    @Test
    void bothDirectionsSwitchAfterTheirJsseBytesAndWritesOfManySizesLandByteExact() throws Exception {
        connect(true, true);
        final TcpTls dialler = end(client);
        final TcpTls acceptor = end(server);

        for (final int size :
                new int[] {1, 100, 16_383, 16_384, TcpRecords.MAX_PLAINTEXT, TcpRecords.BUFFER, 1 << 20, (3 << 20) + 7
                }) {
            final byte[] up = bytes(size);
            final byte[] down = bytes(size);
            assertThat(move(dialler, acceptor, up))
                    .as("client to server, %d bytes", size)
                    .isEqualTo(up);
            assertThat(move(acceptor, dialler, down))
                    .as("server to client, %d bytes", size)
                    .isEqualTo(down);
        }
        assertThat(dialler.switched()).isTrue();
        assertThat(acceptor.switched()).isTrue();
    }

    @ParameterizedTest(name = "client offers {0}, server offers {1}")
    @CsvSource({"true, false", "false, true", "false, false"})
    void withoutBothOffersTheConnectionKeepsJsseRecordsAndStillMovesByteExact(
            final boolean clientOffers, final boolean serverOffers) throws Exception {
        connect(clientOffers, serverOffers);
        final TcpTls dialler = end(client);
        final TcpTls acceptor = end(server);

        final byte[] up = bytes(1 << 20);
        final byte[] down = bytes(100_000);
        assertThat(move(dialler, acceptor, up)).isEqualTo(up);
        assertThat(move(acceptor, dialler, down)).isEqualTo(down);
        assertThat(dialler.switched()).isFalse();
        assertThat(acceptor.switched()).isFalse();
    }

    @Test
    void aTamperedEngineRecordLandsNothingOfItselfAndFailsTheRead() throws Exception {
        connect(true, true);
        final TcpTls dialler = end(client);
        final TcpTls acceptor = end(server);
        switchBoth(dialler, acceptor);
        final byte[] payload = bytes(8 * TcpRecords.MAX_PLAINTEXT);
        final ByteBuffer region = region(payload.length);
        final int badRecord = 3;
        // Each write's records fill a buffer of the socket's thread: header, MAX_PLAINTEXT bytes, tag.
        Objects.requireNonNull(relay).flipFromNow(badRecord * (long) TcpRecords.BUFFER + 1000);

        final Throwable failure = transfer(dialler, acceptor, payload, region);

        assertThat(failure).isInstanceOf(SSLException.class).hasRootCauseInstanceOf(AEADBadTagException.class);
        assertLanded(region, payload, badRecord * TcpRecords.MAX_PLAINTEXT);
    }

    /**
     * A stream that ends inside a record was cut (by whoever sits between, or by a peer that stopped mid-write): the
     * read fails with an SSLException naming it, which the engine counts and logs as a TLS failure, unlike the end of
     * a stream between records (a closed connection).
     */
    @Test
    void aStreamCutInsideAnEngineRecordLandsOnlyTheWholeRecordsBeforeAndFailsTheRead() throws Exception {
        connect(true, true);
        final TcpTls dialler = end(client);
        final TcpTls acceptor = end(server);
        switchBoth(dialler, acceptor);
        final byte[] payload = bytes(5 * TcpRecords.MAX_PLAINTEXT);
        final ByteBuffer region = region(payload.length);
        Objects.requireNonNull(relay).cutFromNow(2 * (long) TcpRecords.BUFFER + 70_000);

        final Throwable failure = transfer(dialler, acceptor, payload, region);

        assertThat(failure).isInstanceOf(SSLException.class).hasMessageContaining("ended inside a record");
        assertLanded(region, payload, 2 * TcpRecords.MAX_PLAINTEXT);
    }

    /**
     * Moves bytes until both directions run on engine records: the server's first write carries its switch record;
     * the client's writes go through JSSE until it read that, its next write carries its own.
     */
    private void switchBoth(final TcpTls dialler, final TcpTls acceptor) throws IOException {
        final long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (!dialler.switched() || !acceptor.switched()) {
            assertThat(System.nanoTime() - deadline).as("switched in time").isNegative();
            move(acceptor, dialler, bytes(10));
            move(dialler, acceptor, bytes(10));
        }
    }

    private static void assertLanded(final ByteBuffer region, final byte[] payload, final int landed) {
        assertThat(region.position()).isEqualTo(landed);
        final byte[] all = new byte[payload.length];
        region.get(0, all);
        assertThat(Arrays.copyOf(all, landed)).isEqualTo(Arrays.copyOf(payload, landed));
        final byte[] untouched = new byte[payload.length - landed];
        Arrays.fill(untouched, UNTOUCHED);
        assertThat(Arrays.copyOfRange(all, landed, payload.length)).isEqualTo(untouched);
    }

    /** Moves {@code payload} from {@code writer} to {@code reader}; what arrived. */
    private static byte[] move(final TcpTls writer, final TcpTls reader, final byte[] payload) throws IOException {
        final ByteBuffer region = region(payload.length);
        final Throwable failure = transfer(writer, reader, payload, region);
        if (failure != null) {
            throw new AssertionError("the transfer failed", failure);
        }
        final byte[] arrived = new byte[payload.length];
        region.get(0, arrived);
        return arrived;
    }

    /**
     * Writes {@code payload} on {@code writer}, reads it into {@code region} on {@code reader} (each end also reads
     * what the other sends, as a connection does: the switch records); the read's failure, or null.
     */
    private static @Nullable Throwable transfer(
            final TcpTls writer, final TcpTls reader, final byte[] payload, final ByteBuffer region)
            throws IOException {
        final ByteBuffer[] source = {ByteBuffer.wrap(payload)};
        final ByteBuffer[] destination = {region};
        final ByteBuffer nothing = ByteBuffer.allocate(0);
        final long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (region.hasRemaining()) {
            assertThat(System.nanoTime() - deadline).as("moved in time").isNegative();
            if (source[0].hasRemaining() || writer.pendingOutput()) {
                writer.write(source);
                writer.flush();
            }
            writer.read(nothing);
            final Throwable failure = catchThrowable(() -> {
                if (reader.read(destination) < 0) {
                    throw new EndOfStream();
                }
            });
            if (failure != null) {
                return failure;
            }
            Thread.onSpinWait();
        }
        return null;
    }

    /**
     * Connects a client and a server through the relay, runs the TLS handshake, sends some bytes each way through
     * JSSE (the switch records must count them), then pipelines both as the connections do: the client first.
     */
    private void connect(final boolean clientOffers, final boolean serverOffers) throws IOException {
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
        final TcpTls dialler = new TcpTls(dialled, engine(true, clientOffers));
        final TcpTls acceptorSide = new TcpTls(accepted, engine(false, serverOffers));
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
        final byte[] hello = bytes(333);
        final byte[] challenge = bytes(40_000);
        assertThat(move(dialler, acceptorSide, hello)).isEqualTo(hello);
        assertThat(move(acceptorSide, dialler, challenge)).isEqualTo(challenge);
        dialler.pipeline(TcpThreads.FACTORY, "te-tls-io test client");
        acceptorSide.pipeline(TcpThreads.FACTORY, "te-tls-io test server");
    }

    private byte[] bytes(final int length) {
        final byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    private static SSLEngine engine(final boolean clientMode, final boolean offers) {
        final SSLEngine engine = CONTEXT.createSSLEngine();
        engine.setUseClientMode(clientMode);
        engine.setNeedClientAuth(!clientMode);
        engine.setEnabledProtocols(new String[] {"TLSv1.3"});
        TcpTlsEngines.enableCipherSuites(engine, List.of());
        if (offers) {
            TcpRecords.offer(engine);
        }
        return engine;
    }

    /** A destination like a registered region: off the heap, every byte {@link #UNTOUCHED} until written. */
    private static ByteBuffer region(final int length) {
        final ByteBuffer region = ByteBuffer.allocateDirect(length);
        while (region.hasRemaining()) {
            region.put(UNTOUCHED);
        }
        return region.clear();
    }

    private static TcpTls end(final @Nullable TcpTls end) {
        return Objects.requireNonNull(end);
    }

    /** The reader's stream ended. */
    private static final class EndOfStream extends IOException {
        private static final long serialVersionUID = 1L;
    }
}
