package dev.transferengine;

import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.test.TlsFixture;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * TLS on the tcp transport against peers that do not belong: one without TLS (either way round) and one whose
 * certificate the cluster does not trust. Each is refused before the cluster-key handshake, counted under
 * {@code handshakes.failed/tls}, and the writer gets an error that names TLS. Large payloads cross record bounds.
 */
class TcpTlsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final Arena arena = Arena.ofShared();
    private final List<TransferEngine> engines = new ArrayList<>();

    @AfterEach
    void close() {
        engines.forEach(TransferEngine::close);
        arena.close();
    }

    private TransferEngine engine(final @Nullable TransportTls tls) {
        return engine(tls, "engine");
    }

    private TransferEngine engine(final @Nullable TransportTls tls, final String records) {
        final TransferEngine engine = TransferEngine.builder()
                .bindAddress("127.0.0.1")
                .operationTimeout(WAIT)
                .drainTimeout(Duration.ofSeconds(1))
                .tls(tls)
                .option("tcp.tlsRecords", records)
                .build();
        engines.add(engine);
        return engine;
    }

    private static long tlsFailures(final TransferEngine engine) {
        return engine.transportEvents().stream()
                .filter(event -> event.category().equals("handshakes.failed")
                        && event.reason().equals("tls"))
                .mapToLong(TransportEvent::count)
                .sum();
    }

    private static Throwable failure(final TransferEngine from, final MemoryRegion source, final MemoryRegion target) {
        final ExecutionException failed = assertThrows(ExecutionException.class, () -> from.submit(
                        SingleWrite.of(source, 0, source.length(), target.descriptor(), 0))
                .get(WAIT.toSeconds(), TimeUnit.SECONDS));
        return Objects.requireNonNull(failed.getCause());
    }

    @Test
    void aFourMebibyteWriteWithImmArrivesIntactOverTls() throws Exception {
        final TransferEngine sender = engine(TlsFixture.trusted());
        final TransferEngine receiver = engine(TlsFixture.trusted());
        final long size = 4 << 20;
        final MemorySegment data = arena.allocate(size, 4096);
        for (long i = 0; i < size; i += 8) {
            data.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
        }
        final MemoryRegion source = sender.register(data, Device.host());
        final MemoryRegion target = receiver.register(arena.allocate(size, 4096), Device.host());
        final ImmCounter imms = receiver.immCounter(77);

        sender.submit(SingleWrite.of(source, 0, size, target.descriptor(), 0).withImm(77))
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(target.segment().mismatch(data)).isEqualTo(-1);
        await().atMost(WAIT).until(() -> imms.balance() == 1);
        assertThat(tlsFailures(sender) + tlsFailures(receiver)).isZero();
    }

    @Test
    void anEngineWithJsseRecordsOnlyAndOneOfferingEngineRecordsWriteBothWaysByteExact() throws Exception {
        final TransferEngine older = engine(TlsFixture.trusted(), "jsse");
        final TransferEngine newer = engine(TlsFixture.trusted(), "engine");
        final long size = (3 << 20) + 5;
        final MemorySegment data = arena.allocate(size, 4096);
        for (long i = 0; i + 8 <= size; i += 8) {
            data.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
        }
        final MemoryRegion atOlder = older.register(data, Device.host());
        final MemoryRegion atNewer = newer.register(arena.allocate(size, 4096), Device.host());

        older.submit(SingleWrite.of(atOlder, 0, size, atNewer.descriptor(), 0)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(atNewer.segment().mismatch(data)).isEqualTo(-1);
        atOlder.segment().fill((byte) 0);
        newer.submit(SingleWrite.of(atNewer, 0, size, atOlder.descriptor(), 0)).get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(atOlder.segment().mismatch(data)).isEqualTo(-1);
        assertThat(tlsFailures(older) + tlsFailures(newer)).isZero();
    }

    @Test
    void anUnknownRecordLayerIsRefusedNamingTheOption() {
        assertThatThrownBy(() -> engine(TlsFixture.trusted(), "kernel"))
                .hasMessageContaining("tcp.tlsRecords")
                .hasMessageContaining("kernel");
    }

    @Test
    void eachAuthenticatedTlsConnectionGetsANamedSocketThreadThatEndsWithTheEngines() throws Exception {
        final TransferEngine sender = engine(TlsFixture.trusted());
        final TransferEngine receiver = engine(TlsFixture.trusted());
        final MemoryRegion source = sender.register(arena.allocate(1 << 20, 4096), Device.host());
        final MemoryRegion target = receiver.register(arena.allocate(1 << 20, 4096), Device.host());

        sender.submit(SingleWrite.of(source, 0, source.length(), target.descriptor(), 0))
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);

        // the sender's connection and the receiver's accepted one: both ends of the one authenticated connection
        assertThat(socketThreads()).isEqualTo(2);
        sender.close();
        receiver.close();
        await().atMost(WAIT).until(() -> socketThreads() == 0);
    }

    private static long socketThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.isAlive() && thread.getName().startsWith("te-tls-io "))
                .count();
    }

    @Test
    void aPeerWithoutTlsIsRefusedAndCountedByTheTlsSide() {
        final TransferEngine secured = engine(TlsFixture.trusted());
        final TransferEngine plain = engine(null);
        final MemoryRegion source = plain.register(arena.allocate(64), Device.host());
        final MemoryRegion target = secured.register(arena.allocate(64), Device.host());

        assertThat(failure(plain, source, target))
                .isInstanceOf(PeerUnreachableException.class)
                .hasMessageContaining("require TLS");
        await().atMost(WAIT).until(() -> tlsFailures(secured) == 1);
        assertThat(target.segment().get(ValueLayout.JAVA_BYTE, 0)).isZero();
    }

    @Test
    void aTlsPeerIsRefusedAndCountedByAPlainNic() {
        final TransferEngine secured = engine(TlsFixture.trusted());
        final TransferEngine plain = engine(null);
        final MemoryRegion source = secured.register(arena.allocate(64), Device.host());
        final MemoryRegion target = plain.register(arena.allocate(64), Device.host());

        assertThat(failure(secured, source, target))
                .isInstanceOf(PeerUnreachableException.class)
                .hasMessageContaining("TLS handshake")
                .hasMessageContaining("may not use TLS");
        await().atMost(WAIT).until(() -> tlsFailures(plain) == 1);
    }

    @Test
    void aPeerWithAnUntrustedCertificateIsRefusedWithTheAlertNamed() {
        final TransferEngine member = engine(TlsFixture.trusted());
        final TransferEngine stranger = engine(TlsFixture.stranger());
        final MemoryRegion source = stranger.register(arena.allocate(64), Device.host());
        final MemoryRegion target = member.register(arena.allocate(64), Device.host());

        assertThat(failure(stranger, source, target))
                .isInstanceOf(PeerUnreachableException.class)
                .hasMessageContaining("TLS failed");
        assertThat(tlsFailures(stranger)).isEqualTo(1);
        await().atMost(WAIT).until(() -> tlsFailures(member) == 1);
        assertThat(target.segment().get(ValueLayout.JAVA_BYTE, 0)).isZero();
    }

    @Test
    void aMemberRefusesAPeerThatPresentsAnUntrustedCertificateAsServer() {
        final TransferEngine member = engine(TlsFixture.trusted());
        final TransferEngine stranger = engine(TlsFixture.stranger());
        final MemoryRegion source = member.register(arena.allocate(64), Device.host());
        final MemoryRegion target = stranger.register(arena.allocate(64), Device.host());

        assertThat(failure(member, source, target))
                .isInstanceOf(PeerUnreachableException.class)
                .hasMessageContaining("TLS failed");
        assertThat(tlsFailures(member)).isEqualTo(1);
    }
}
