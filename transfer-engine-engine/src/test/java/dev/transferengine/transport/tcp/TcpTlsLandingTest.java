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

    /**
     * Plaintext per full TLS 1.3 record as JSSE cuts them: the record's protected part (plaintext, content type,
     * 16-byte AES-GCM tag) stays within 2^14 bytes.
     */
    private static final int RECORD = 16_384 - 1 - 16;
    /** A full record on the wire: the 5-byte header and its protected part. */
    private static final int WIRE_RECORD = 5 + 16_384;

    private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(30);

    private @Nullable TlsPair pair;

    @AfterEach
    void close() throws IOException {
        if (pair != null) {
            pair.close();
        }
    }

    @ParameterizedTest(name = "pipelined {0}")
    @ValueSource(booleans = {false, true})
    void aWriteOfManyRecordsLandsByteExact(final boolean pipelined) throws Exception {
        final TlsPair connected = connect(pipelined);
        final byte[] payload = payload(64 * RECORD + 1000);
        final ByteBuffer region = TlsPair.region(payload.length);

        final Throwable failure = move(connected, payload, region);

        assertThat(failure).isNull();
        assertThat(region.position()).isEqualTo(payload.length);
        assertThat(bytes(region, 0, payload.length)).isEqualTo(payload);
    }

    @ParameterizedTest(name = "pipelined {0}")
    @ValueSource(booleans = {false, true})
    void aTamperedRecordLandsNothingAndFailsTheRead(final boolean pipelined) throws Exception {
        final TlsPair connected = connect(pipelined);
        final byte[] payload = payload(64 * RECORD);
        final ByteBuffer region = TlsPair.region(payload.length);
        final int badRecord = 6;
        connected.relay.flipFromNow(badRecord * (long) WIRE_RECORD + 1000);

        final Throwable failure = move(connected, payload, region);

        assertThat(failure).isInstanceOf(SSLException.class).hasRootCauseInstanceOf(AEADBadTagException.class);
        // The records before the tampered one authenticated and landed; nothing of it or after it did.
        final int landed = badRecord * RECORD;
        assertThat(region.position()).isEqualTo(landed);
        assertThat(bytes(region, 0, landed)).isEqualTo(Arrays.copyOf(payload, landed));
        final byte[] rest = bytes(region, landed, payload.length - landed);
        final byte[] untouched = new byte[rest.length];
        Arrays.fill(untouched, TlsPair.UNTOUCHED);
        assertThat(rest).isEqualTo(untouched);
    }

    /** Writes {@code payload} on the client and reads it into {@code region} on the server; the read's failure. */
    private static @Nullable Throwable move(final TlsPair connected, final byte[] payload, final ByteBuffer region)
            throws IOException {
        final TcpTls writer = connected.client;
        final TcpTls reader = connected.server;
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

    private TlsPair connect(final boolean pipelined) throws IOException {
        final TlsPair connected = new TlsPair(false, false);
        pair = connected;
        connected.handshake(DEADLINE_NANOS);
        if (pipelined) {
            connected.pipeline();
        }
        return connected;
    }

    private static byte[] payload(final int length) {
        final byte[] payload = new byte[length];
        new Random(7).nextBytes(payload);
        return payload;
    }

    private static byte[] bytes(final ByteBuffer region, final int from, final int length) {
        final byte[] copy = new byte[length];
        region.get(from, copy);
        return copy;
    }
}
