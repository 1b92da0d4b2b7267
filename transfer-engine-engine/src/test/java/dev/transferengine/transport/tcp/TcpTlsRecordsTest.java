package dev.transferengine.transport.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.crypto.AEADBadTagException;
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

    private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final Random random = new Random(3);
    private @Nullable TlsPair pair;

    @AfterEach
    void close() throws IOException {
        if (pair != null) {
            pair.close();
        }
    }

    @Test
    void bothDirectionsSwitchAfterTheirJsseBytesAndWritesOfManySizesLandByteExact() throws Exception {
        final TlsPair connected = connect(true, true);
        final TcpTls dialler = connected.client;
        final TcpTls acceptor = connected.server;

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
        final TlsPair connected = connect(clientOffers, serverOffers);
        final TcpTls dialler = connected.client;
        final TcpTls acceptor = connected.server;

        final byte[] up = bytes(1 << 20);
        final byte[] down = bytes(100_000);
        assertThat(move(dialler, acceptor, up)).isEqualTo(up);
        assertThat(move(acceptor, dialler, down)).isEqualTo(down);
        assertThat(dialler.switched()).isFalse();
        assertThat(acceptor.switched()).isFalse();
    }

    @Test
    void aTamperedEngineRecordLandsNothingOfItselfAndFailsTheRead() throws Exception {
        final TlsPair connected = connect(true, true);
        final TcpTls dialler = connected.client;
        final TcpTls acceptor = connected.server;
        switchBoth(dialler, acceptor);
        final byte[] payload = bytes(8 * TcpRecords.MAX_PLAINTEXT);
        final ByteBuffer region = TlsPair.region(payload.length);
        final int badRecord = 3;
        // Each write's records fill a buffer of the socket's thread: header, MAX_PLAINTEXT bytes, tag.
        connected.relay.flipFromNow(badRecord * (long) TcpRecords.BUFFER + 1000);

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
        final TlsPair connected = connect(true, true);
        final TcpTls dialler = connected.client;
        final TcpTls acceptor = connected.server;
        switchBoth(dialler, acceptor);
        final byte[] payload = bytes(5 * TcpRecords.MAX_PLAINTEXT);
        final ByteBuffer region = TlsPair.region(payload.length);
        connected.relay.cutFromNow(2 * (long) TcpRecords.BUFFER + 70_000);

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
        Arrays.fill(untouched, TlsPair.UNTOUCHED);
        assertThat(Arrays.copyOfRange(all, landed, payload.length)).isEqualTo(untouched);
    }

    /** Moves {@code payload} from {@code writer} to {@code reader}; what arrived. */
    private static byte[] move(final TcpTls writer, final TcpTls reader, final byte[] payload) throws IOException {
        final ByteBuffer region = TlsPair.region(payload.length);
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
     * JSSE (the switch records must count them), then pipelines both as the connections do.
     */
    private TlsPair connect(final boolean clientOffers, final boolean serverOffers) throws IOException {
        final TlsPair connected = new TlsPair(clientOffers, serverOffers);
        pair = connected;
        connected.handshake(DEADLINE_NANOS);
        final byte[] hello = bytes(333);
        final byte[] challenge = bytes(40_000);
        assertThat(move(connected.client, connected.server, hello)).isEqualTo(hello);
        assertThat(move(connected.server, connected.client, challenge)).isEqualTo(challenge);
        connected.pipeline();
        return connected;
    }

    private byte[] bytes(final int length) {
        final byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    /** The reader's stream ended. */
    private static final class EndOfStream extends IOException {
        private static final long serialVersionUID = 1L;
    }
}
