package dev.transferengine.transport.tcp;

import dev.transferengine.test.TlsFixture;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import javax.crypto.AEADBadTagException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The engine records' AEAD (docs/security.md, "Engine records") between the two ends of a real TLS 1.3 session made
 * in memory: keys from the exporter, one per direction, nonces from the record count, so that tampering, replay,
 * reordering, cutting and reflection all fail the tag, and rekeying keeps both ends in step.
 */
class TcpRecordCipherTest {

    private static final SSLContext CONTEXT = TlsFixture.trusted().context();

    private final Random random = new Random(11);
    private SSLEngine client = CONTEXT.createSSLEngine();
    private SSLEngine server = CONTEXT.createSSLEngine();

    @BeforeEach
    void handshake() throws SSLException {
        client = engine(true);
        server = engine(false);
        client.beginHandshake();
        server.beginHandshake();
        final ByteBuffer toServer = ByteBuffer.allocate(1 << 17);
        final ByteBuffer toClient = ByteBuffer.allocate(1 << 17);
        for (int step = 0; step < 200 && (handshaking(client) || handshaking(server)); step++) {
            step(client, toClient, toServer);
            step(server, toServer, toClient);
        }
        assertThat(handshaking(client) || handshaking(server))
                .as("handshake done")
                .isFalse();
        assertThat(TcpRecords.negotiated(client)).isTrue();
        assertThat(TcpRecords.negotiated(server)).isTrue();
    }

    @Test
    void recordsOfManySizesOpenByteExactInEachDirection() throws SSLException {
        final TcpRecordCipher clientSeals = new TcpRecordCipher(client, true, TcpRecordCipher.BYTES_PER_KEY);
        final TcpRecordCipher serverOpens = new TcpRecordCipher(server, true, TcpRecordCipher.BYTES_PER_KEY);
        final TcpRecordCipher serverSeals = new TcpRecordCipher(server, false, TcpRecordCipher.BYTES_PER_KEY);
        final TcpRecordCipher clientOpens = new TcpRecordCipher(client, false, TcpRecordCipher.BYTES_PER_KEY);
        for (final int size : new int[] {0, 1, 15, 16, 17, 767, 768, 769, 16_384, 100_000, TcpRecords.MAX_PLAINTEXT}) {
            final byte[] plaintext = bytes(size);
            assertThat(open(serverOpens, seal(clientSeals, plaintext))).isEqualTo(plaintext);
            assertThat(open(clientOpens, seal(serverSeals, plaintext))).isEqualTo(plaintext);
        }
    }

    @Test
    void aRecordSealedUnderKeysOfTheSessionIsNotPlaintext() throws SSLException {
        final TcpRecordCipher seals = new TcpRecordCipher(client, true, TcpRecordCipher.BYTES_PER_KEY);
        final byte[] plaintext = bytes(4096);

        final byte[] sealed = seal(seals, plaintext);

        assertThat(Arrays.copyOfRange(sealed, TcpRecords.HEADER, TcpRecords.HEADER + plaintext.length))
                .isNotEqualTo(plaintext);
    }

    @Test
    void aFlippedBitInTheHeaderTheCiphertextOrTheTagFailsTheTag() throws SSLException {
        for (final int at :
                new int[] {0, 3, TcpRecords.HEADER, TcpRecords.HEADER + 500, TcpRecords.HEADER + 1000 + 15}) {
            final TcpRecordCipher seals = new TcpRecordCipher(client, true, TcpRecordCipher.BYTES_PER_KEY);
            final TcpRecordCipher opens = new TcpRecordCipher(server, true, TcpRecordCipher.BYTES_PER_KEY);
            final byte[] sealed = seal(seals, bytes(1000));
            sealed[at] ^= 0x10;

            assertFailsTheTag(opens, sealed);
        }
    }

    @Test
    void aReplayedReorderedOrDroppedRecordFailsTheTag() throws SSLException {
        final TcpRecordCipher seals = new TcpRecordCipher(client, true, TcpRecordCipher.BYTES_PER_KEY);
        final List<byte[]> records = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            records.add(seal(seals, bytes(2000)));
        }

        final TcpRecordCipher replayed = new TcpRecordCipher(server, true, TcpRecordCipher.BYTES_PER_KEY);
        open(replayed, records.get(0));
        assertFailsTheTag(replayed, records.get(0));

        final TcpRecordCipher reordered = new TcpRecordCipher(server, true, TcpRecordCipher.BYTES_PER_KEY);
        assertFailsTheTag(reordered, records.get(1));

        final TcpRecordCipher dropped = new TcpRecordCipher(server, true, TcpRecordCipher.BYTES_PER_KEY);
        open(dropped, records.get(0));
        assertFailsTheTag(dropped, records.get(2));
    }

    @Test
    void aRecordReflectedBackToItsSenderFailsTheTag() throws SSLException {
        final TcpRecordCipher seals = new TcpRecordCipher(client, true, TcpRecordCipher.BYTES_PER_KEY);
        final TcpRecordCipher clientOpens = new TcpRecordCipher(client, false, TcpRecordCipher.BYTES_PER_KEY);

        assertFailsTheTag(clientOpens, seal(seals, bytes(100)));
    }

    @Test
    void aRecordCutShortFailsTheTag() throws SSLException {
        final TcpRecordCipher seals = new TcpRecordCipher(client, true, TcpRecordCipher.BYTES_PER_KEY);
        final TcpRecordCipher opens = new TcpRecordCipher(server, true, TcpRecordCipher.BYTES_PER_KEY);
        final byte[] sealed = seal(seals, bytes(1000));
        final ByteBuffer plain = ByteBuffer.allocate(sealed.length);

        // The header names the full length; the opener is given 10 bytes fewer, as a cut record would be.
        assertThatThrownBy(
                        () -> opens.open(ByteBuffer.wrap(sealed), 0, sealed.length - TcpRecords.HEADER - 10, plain, 0))
                .isInstanceOf(SSLException.class)
                .hasCauseInstanceOf(AEADBadTagException.class);
    }

    @Test
    void bothEndsMoveToTheNextKeyAtTheSameRecordAndKeepOpening() throws SSLException {
        final long bytesPerKey = 10_000;
        final TcpRecordCipher seals = new TcpRecordCipher(client, true, bytesPerKey);
        final TcpRecordCipher opens = new TcpRecordCipher(server, true, bytesPerKey);
        final TcpRecordCipher stays = new TcpRecordCipher(server, true, Long.MAX_VALUE);

        for (int i = 0; i < 12; i++) {
            final byte[] plaintext = bytes(3000);
            final byte[] sealed = seal(seals, plaintext);
            assertThat(open(opens, sealed)).isEqualTo(plaintext);
            if (i < 3) {
                assertThat(open(stays, sealed)).isEqualTo(plaintext);
            } else if (i == 3) {
                // The fourth record would pass 10,000 bytes: it is sealed under the next generation's key.
                assertFailsTheTag(stays, sealed);
            }
        }
        assertThat(seals.generation()).isEqualTo(opens.generation()).isEqualTo(3);
    }

    private byte[] bytes(final int length) {
        final byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    /** A record as the worker lays it out and the socket's thread seals it. */
    private static byte[] seal(final TcpRecordCipher cipher, final byte[] plaintext) throws SSLException {
        final ByteBuffer record = ByteBuffer.allocate(TcpRecords.HEADER + plaintext.length + TcpRecords.TAG);
        record.put(TcpRecords.TYPE).putInt(plaintext.length + TcpRecords.TAG).put(plaintext);
        cipher.seal(record.array(), 0, plaintext.length);
        return record.array();
    }

    private static byte[] open(final TcpRecordCipher cipher, final byte[] sealed) throws SSLException {
        final ByteBuffer plain = ByteBuffer.allocate(sealed.length);
        final int length = cipher.open(ByteBuffer.wrap(sealed), 0, sealed.length - TcpRecords.HEADER, plain, 3);
        return Arrays.copyOfRange(plain.array(), 3, 3 + length);
    }

    private static void assertFailsTheTag(final TcpRecordCipher cipher, final byte[] sealed) {
        assertThatThrownBy(() -> open(cipher, sealed))
                .isInstanceOf(SSLException.class)
                .hasCauseInstanceOf(AEADBadTagException.class);
    }

    private static SSLEngine engine(final boolean clientMode) {
        final SSLEngine engine = CONTEXT.createSSLEngine();
        engine.setUseClientMode(clientMode);
        engine.setNeedClientAuth(!clientMode);
        engine.setEnabledProtocols(new String[] {"TLSv1.3"});
        TcpRecords.offer(engine);
        return engine;
    }

    private static boolean handshaking(final SSLEngine engine) {
        return engine.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING;
    }

    /** One handshake step of {@code engine}: reads from {@code in}, writes to {@code out} (both in write mode). */
    private static void step(final SSLEngine engine, final ByteBuffer in, final ByteBuffer out) throws SSLException {
        switch (engine.getHandshakeStatus()) {
            case NEED_WRAP -> engine.wrap(ByteBuffer.allocate(0), out);
            case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                in.flip();
                engine.unwrap(in, ByteBuffer.allocate(1 << 17));
                in.compact();
            }
            case NEED_TASK -> {
                Runnable task;
                while ((task = engine.getDelegatedTask()) != null) {
                    task.run();
                }
            }
            default -> {}
        }
    }
}
