package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.EngineConfig;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Attack traffic on loopback against one NIC whose poll step reads a manual clock, so every timeout is triggered
 * by advancing the clock, never by waiting: floods, stalls, spoofed and unauthenticated handshakes, other protocol
 * versions, full per-peer queues and an overflowing peer table.
 */
class TcpHardeningTest {

    private static final String KEY = "d7gtTrS7pDFQMzN0pkzlkZeQ3v46dqPNqwwMBgMKYHI=";
    private static final Map<String, String> KEYED = Map.of(TcpSettings.CLUSTER_KEY, KEY);
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private final Arena arena = Arena.ofShared();
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final IdentityHashMap<TcpDomain, TcpBuffers> pools = new IdentityHashMap<>();
    private long time = 1_000 * SECOND;

    @AfterEach
    void close() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        arena.close();
    }

    private TcpDomain open(final RecordingDomainListener listener, final Map<String, String> options) {
        final TcpBuffers buffers = new TcpBuffers();
        final TcpDomain domain = TcpDomains.open(listener, options, () -> time, buffers);
        pools.put(domain, buffers);
        toClose.add(domain);
        return domain;
    }

    /** Connection buffers waiting for reuse in {@code domain}'s pool. */
    private int pooledBuffers(final TcpDomain domain) {
        return Objects.requireNonNull(pools.get(domain), "opened by open()").free();
    }

    /** How many of {@code peers} the domain has not closed. */
    private static long stillOpen(final List<RawPeer> peers) {
        return peers.stream().filter(peer -> !peer.closedByPeer()).count();
    }

    private RawPeer raw(final TcpDomain target) throws IOException {
        final RawPeer raw = new RawPeer(target);
        toClose.add(raw);
        return raw;
    }

    /** Moves the manual clock and polls once, which runs the timeout sweep. */
    private void advance(final long nanos, final TcpDomain... domains) {
        time += nanos;
        for (final TcpDomain domain : domains) {
            domain.poll();
        }
    }

    @Test
    void aVersionOneHelloGetsAnErrorNamingBothVersionsAndTheConnectionCloses() throws IOException {
        final TcpDomain target = open(new RecordingDomainListener(), KEYED);
        final RawPeer raw = raw(target);
        final ByteBuffer hello = RawPeer.header(TcpFrame.HELLO, 0, 1, 0, 0, 8);
        hello.put(4, (byte) 1);
        raw.send(hello).send(new byte[8]);
        pollUntil(raw::closedByPeer, target);

        final TcpFrame error = raw.answer(0);
        assertThat(error.type()).isEqualTo(TcpFrame.ERROR);
        assertThat(error.aux()).isEqualTo(TcpFrame.ERROR_VERSION);
        assertThat(error.imm()).isEqualTo(TcpFrame.VERSION);
        final byte[] message = new byte[(int) error.length()];
        raw.receivedAt(TcpFrame.HEADER_LENGTH, message);
        assertThat(new String(message, StandardCharsets.US_ASCII))
                .contains("v1")
                .contains("v" + TcpFrame.VERSION);
        assertThat(TcpDomains.count(target, TcpCounter.HANDSHAKE_VERSION)).isEqualTo(1);
    }

    @Test
    void aWrongKeyOrAMissingProofIsClosedWithoutARefusalOracle() throws IOException {
        final RecordingDomainListener events = new RecordingDomainListener();
        final TcpDomain target = open(events, KEYED);
        final long rkey = target.register(arena.allocate(4096), Device.host());

        final RawPeer wrongKey = raw(target);
        wrongKey.authenticate(
                        target, List.of(TcpSettings.decodeKey("KqyWad/WpftAydYFjPxgOUdBXph2F1zDy1XpcR+GT+A=", "test")))
                .send(RawPeer.header(TcpFrame.WRITE, 0, 1, rkey, 1 << 20, 0))
                .send(RawPeer.header(TcpFrame.WRITE, 0, 2, rkey + 1, 0, 0));
        pollUntil(wrongKey::closedByPeer, target);

        // No AUTH at all: requests straight after HELLO.
        final RawPeer noProof = raw(target);
        noProof.send(RawPeer.hello(new byte[TcpFrame.NONCE_LENGTH]))
                .send(RawPeer.header(TcpFrame.WRITE, 0, 1, rkey, 1 << 20, 0));
        pollUntil(noProof::closedByPeer, target);

        // After the CHALLENGE (dropped by authenticate) not one byte: no NACK, no reason, no region size.
        assertThat(wrongKey.receivedBytes()).isZero();
        assertThat(noProof.receivedBytes())
                .isEqualTo(TcpFrame.HEADER_LENGTH
                        + TcpFrame.NONCE_LENGTH
                        + TcpAuthenticator.PROOF_LENGTH
                        + target.address().toBytes().length);
        assertThat(TcpDomains.count(target, TcpCounter.HANDSHAKE_AUTH_FAILED)).isEqualTo(1);
        assertThat(TcpDomains.count(target, TcpCounter.HANDSHAKE_MALFORMED)).isEqualTo(1);
        assertThat(TcpDomains.count(target, TcpCounter.REFUSED_UNKNOWN_KEY)
                        + TcpDomains.count(target, TcpCounter.REFUSED_OUT_OF_BOUNDS))
                .isZero();
        assertThat(target.peers()).isEmpty();
        assertThat(pooledBuffers(target)).isZero();
    }

    @Test
    void authenticatedPeersAreToldTheRefusalReason() throws IOException {
        final TcpDomain target = open(new RecordingDomainListener(), KEYED);
        final long rkey = target.register(arena.allocate(4096), Device.host());
        final RawPeer raw = raw(target);
        raw.authenticate(target, List.of(TcpSettings.decodeKey(KEY, "test")))
                .send(RawPeer.header(TcpFrame.WRITE, 0, 1, rkey, 4000, 200))
                .send(new byte[200]);
        pollUntil(() -> raw.receivedBytes() >= TcpFrame.HEADER_LENGTH, target);

        assertThat(raw.answer(0).type()).isEqualTo(TcpFrame.NACK);
        assertThat(raw.answer(0).aux()).isEqualTo(TcpRefusal.OUT_OF_BOUNDS.code());
        assertThat(raw.answer(0).length()).isEqualTo(4096);
        assertThat(TcpDomains.count(target, TcpCounter.REFUSED_OUT_OF_BOUNDS)).isEqualTo(1);
    }

    @Test
    void rotationAcceptsBothKeysAndProvesWithTheFirst() {
        final RecordingDomainListener initiatorEvents = new RecordingDomainListener();
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final String next = "dc1d807f182efa86291c6381b74bbef4b34fb9a5e838a1ebddc8ac822718c939";
        // Mid-rotation: every engine accepts both keys; the target already proves with the next one, the
        // initiator still with the current one.
        final TcpDomain target = open(targetEvents, Map.of(TcpSettings.CLUSTER_KEY, next + "," + KEY));
        final TcpDomain initiator = open(initiatorEvents, Map.of(TcpSettings.CLUSTER_KEY, KEY + "," + next));
        final MemorySegment source = arena.allocate(64).fill((byte) 7);
        final long sourceKey = initiator.register(source, Device.host());
        final long rkey = target.register(arena.allocate(64), Device.host());
        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, 64)
                .target(initiator.resolve(target.address()), 0, 0, rkey)
                .imm(true, 9));
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);

        assertThat(initiatorEvents.completed).containsKey(1L);
        assertThat(targetEvents.imms).containsExactly(9);
    }

    @Test
    void aSpoofedHelloClaimingToBeTheTargetLeavesTheRealConnectionAlone() throws IOException {
        final RecordingDomainListener initiatorEvents = new RecordingDomainListener();
        final TcpDomain initiator = open(initiatorEvents, KEYED);
        final TcpDomain target = open(new RecordingDomainListener(), KEYED);
        final MemorySegment source = arena.allocate(1024).fill((byte) 1);
        final long sourceKey = initiator.register(source, Device.host());
        final long rkey = target.register(arena.allocate(1024), Device.host());
        final long peer = initiator.resolve(target.address());
        initiator.write(new WriteDescriptor()
                .token(0)
                .source(source, 0, sourceKey, 1024)
                .target(peer, 0, 0, rkey));
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);

        final int spoofs = 20;
        for (int i = 1; i <= spoofs; i++) {
            // The spoofer claims the target's address with a new incarnation, as a restarted target would.
            final RawPeer spoofer = raw(initiator);
            spoofer.send(RawPeer.hello(
                    new byte[TcpFrame.NONCE_LENGTH], target.address().toBytes(), 0xBAD0 + i));
            pollUntil(() -> spoofer.receivedBytes() > 0, initiator);
            spoofer.send(RawPeer.header(TcpFrame.AUTH, 0, 0, 0, 0, TcpAuthenticator.PROOF_LENGTH))
                    .send(new byte[TcpAuthenticator.PROOF_LENGTH]);
            initiator.write(new WriteDescriptor()
                    .token(i)
                    .source(source, 0, sourceKey, 1024)
                    .target(peer, 0, 0, rkey));
            final long token = i;
            pollUntil(() -> spoofer.closedByPeer() && initiatorEvents.ended(token), initiator, target);
        }
        pollUntil(() -> initiatorEvents.ended() == spoofs + 1, initiator, target);

        assertThat(initiatorEvents.failed).isEmpty();
        assertThat(TcpDomains.count(initiator, TcpCounter.PEERS_RESTARTED)).isZero();
        assertThat(TcpDomains.count(initiator, TcpCounter.HANDSHAKE_AUTH_FAILED))
                .isEqualTo(spoofs);
    }

    @Test
    void aConnectionFloodIsBoundedAndAllocatesNoConnectionBuffers() throws IOException {
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final TcpDomain target =
                open(targetEvents, Map.of(TcpSettings.CLUSTER_KEY, KEY, TcpSettings.MAX_PENDING_HANDSHAKES, "8"));
        final long directBefore = directMemoryUsed();
        final int flood = 64;
        final List<RawPeer> flooders = new ArrayList<>();
        for (int i = 0; i < flood; i++) {
            flooders.add(raw(target));
        }
        // one source: its own bound (a quarter of 8, at least 4) is what holds it; the rest are closed at once
        pollUntil(() -> refusedHandshakes(target) == flood - 4 && stillOpen(flooders) == 4, target);
        // Before v2 each accept took 320 KiB of direct memory up front: 64 connects were 20 MiB.
        assertThat(directMemoryUsed() - directBefore).isLessThan(1 << 20);

        // The idle flood ages out at the handshake timeout; then a real peer gets in and writes.
        advance(TcpSettings.of(TcpDomains.config(0, KEYED)).handshakeTimeoutNanos() + SECOND, target);
        pollUntil(() -> stillOpen(flooders) == 0, target);
        assertThat(TcpDomains.count(target, TcpCounter.HANDSHAKE_TIMEOUT)).isEqualTo(4);
        final RecordingDomainListener goodEvents = new RecordingDomainListener();
        final TcpDomain good = open(goodEvents, KEYED);
        final MemorySegment source = arena.allocate(256).fill((byte) 3);
        final long sourceKey = good.register(source, Device.host());
        final long rkey = target.register(arena.allocate(256), Device.host());
        good.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, 256)
                .target(good.resolve(target.address()), 0, 0, rkey)
                .imm(true, 1));
        pollUntil(() -> goodEvents.ended() == 1, good, target);
        assertThat(goodEvents.completed).containsKey(1L);
    }

    @Test
    void aChurnerFromOneAddressNeitherLocksANewMemberOutNorDisturbsAuthenticatedOnes() throws IOException {
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final TcpDomain target = open(
                targetEvents,
                Map.of(
                        TcpSettings.CLUSTER_KEY,
                        KEY,
                        TcpSettings.MAX_PENDING_HANDSHAKES,
                        "8",
                        TcpSettings.MAX_INBOUND_CONNECTIONS,
                        "2"));
        final long rkey = target.register(arena.allocate(256), Device.host());
        final RecordingDomainListener memberEvents = new RecordingDomainListener();
        final TcpDomain member = open(memberEvents, KEYED);
        final MemorySegment source = arena.allocate(256).fill((byte) 7);
        final long sourceKey = member.register(source, Device.host());
        final long peer = member.resolve(target.address());

        // The churner holds as many unfinished handshakes as it can, from another loopback address.
        final InetSocketAddress targetSocket =
                new InetSocketAddress(InetAddress.getLoopbackAddress(), TcpDomains.port(target));
        final InetAddress churnerAddress = InetAddress.getByName("127.0.0.2");
        final List<RawPeer> churn = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            churn.add(new RawPeer(targetSocket, churnerAddress, 0));
        }
        // one source holds a quarter of the slots; the rest are closed at once
        pollUntil(() -> refusedHandshakes(target) == 36 && stillOpen(churn) == 4, target);

        // A new member still gets in and writes while the churner holds its slots, and the slots of the
        // authenticated connections (2) are not shared with handshakes at all.
        for (int token = 1; token <= 50; token++) {
            member.write(new WriteDescriptor()
                    .token(token)
                    .source(source, 0, sourceKey, 256)
                    .target(peer, 0, 0, rkey));
        }
        pollUntil(() -> memberEvents.ended() == 50, member, target);
        assertThat(memberEvents.failed).isEmpty();
        assertThat(stillOpen(churn)).isEqualTo(4);
        assertThat(refusedHandshakes(target)).isEqualTo(36);
        for (final RawPeer raw : churn) {
            raw.close();
        }
    }

    @Test
    void aHalfHeaderAndAPayloadThatStallsAreClosedByTheFrameTimeout() throws IOException {
        final TcpDomain target = open(new RecordingDomainListener(), Map.of());
        final long rkey = target.register(arena.allocate(4096), Device.host());
        // The idle one first: the polls of the later handshakes finish its handshake, as the refusal below
        // proves for the others.
        final RawPeer idle = raw(target);
        idle.authenticate(target);
        final RawPeer halfHeader = raw(target);
        halfHeader
                .authenticate(target)
                .send(RawPeer.header(TcpFrame.WRITE, 0, 1, rkey, 0, 16).limit(20));
        final RawPeer hugeClaim = raw(target);
        hugeClaim
                .authenticate(target)
                .send(RawPeer.header(TcpFrame.WRITE, 0, 1, rkey, 0, 1L << 40))
                .send(new byte[1000]);
        pollUntil(() -> TcpDomains.count(target, TcpCounter.REFUSED_OUT_OF_BOUNDS) == 1, target);
        final long frameTimeout = TcpSettings.of(TcpDomains.config(0, Map.of())).frameTimeoutNanos();
        advance(SECOND, target);
        advance(frameTimeout - 2 * SECOND, target);
        assertThat(halfHeader.closedByPeer()).isFalse();
        assertThat(hugeClaim.closedByPeer()).isFalse();

        advance(2 * SECOND, target);
        pollUntil(() -> halfHeader.closedByPeer() && hugeClaim.closedByPeer(), target);
        assertThat(TcpDomains.count(target, TcpCounter.FRAME_TIMEOUT)).isEqualTo(2);
        assertThat(idle.closedByPeer()).isFalse();
        assertThat(target.peers()).as("the idle connection's peer").hasSize(1);
    }

    @Test
    void idleConnectionsCloseAndTheirBuffersAreReused() {
        final RecordingDomainListener initiatorEvents = new RecordingDomainListener();
        final Map<String, String> options = Map.of(TcpSettings.IDLE_TIMEOUT, "60000");
        final TcpDomain initiator = open(initiatorEvents, options);
        final TcpDomain target = open(new RecordingDomainListener(), options);
        final MemorySegment source = arena.allocate(64);
        final long sourceKey = initiator.register(source, Device.host());
        final long rkey = target.register(arena.allocate(64), Device.host());
        final long peer = initiator.resolve(target.address());
        initiator.write(
                new WriteDescriptor().token(1).source(source, 0, sourceKey, 64).target(peer, 0, 0, rkey));
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);

        advance(SECOND, initiator, target);
        advance(61 * SECOND, initiator, target);
        pollUntil(() -> target.peers().isEmpty(), initiator, target);
        assertThat(TcpDomains.count(initiator, TcpCounter.IDLE_CLOSED)).isEqualTo(1);
        assertThat(pooledBuffers(initiator)).isEqualTo(2);
        assertThat(pooledBuffers(target)).isEqualTo(2);

        initiator.write(
                new WriteDescriptor().token(2).source(source, 0, sourceKey, 64).target(peer, 0, 0, rkey));
        pollUntil(() -> initiatorEvents.ended() == 2, initiator, target);
        assertThat(initiatorEvents.failed).isEmpty();
        assertThat(pooledBuffers(initiator)).isZero();
        assertThat(pooledBuffers(target)).isZero();
    }

    @Test
    void aFullQueueToOnePeerIsBackPressureForThatPeerOnly() {
        final RecordingDomainListener events = new RecordingDomainListener();
        final TcpDomain initiator = open(events, Map.of(TcpSettings.MAX_QUEUED_PER_PEER, "4"));
        final TcpDomain frozen = open(new RecordingDomainListener(), Map.of());
        final TcpDomain healthy = open(new RecordingDomainListener(), Map.of());
        final MemorySegment source = arena.allocate(64);
        final long sourceKey = initiator.register(source, Device.host());
        final long frozenKey = frozen.register(arena.allocate(64), Device.host());
        final long healthyKey = healthy.register(arena.allocate(64), Device.host());
        final long toFrozen = initiator.resolve(frozen.address());
        final long toHealthy = initiator.resolve(healthy.address());

        // 'frozen' is never polled: it never answers.
        for (int i = 0; i < 10; i++) {
            initiator.write(new WriteDescriptor()
                    .token(i)
                    .source(source, 0, sourceKey, 64)
                    .target(toFrozen, 0, 0, frozenKey));
        }
        initiator.write(new WriteDescriptor()
                .token(100)
                .source(source, 0, sourceKey, 64)
                .target(toHealthy, 0, 0, healthyKey));
        pollUntil(() -> events.ended(100), initiator, healthy);

        assertThat(events.completed).containsOnlyKeys(100L);
        assertThat(events.failed).hasSize(6).allSatisfy((token, error) -> assertThat(error)
                .isInstanceOf(BackPressureException.class)
                .hasMessageContaining("maxQueuedPerPeer"));
        assertThat(TcpDomains.count(initiator, TcpCounter.BACK_PRESSURE)).isEqualTo(6);
    }

    @Test
    void announcedAddressesAddNoPeersAndTheResolvedTableEvictsBeyondItsCap() throws IOException {
        final RecordingDomainListener events = new RecordingDomainListener();
        final TcpDomain domain = open(events, Map.of(TcpSettings.MAX_PEERS, "2"));
        for (int i = 0; i < 20; i++) {
            try (RawPeer raw = new RawPeer(domain)) {
                raw.authenticate(domain);
                pollUntil(() -> domain.peers().size() == 1, domain);
            }
            pollUntil(() -> domain.peers().isEmpty(), domain);
        }
        assertThat(domain.peers()).isEmpty();

        final long first = domain.resolve(
                TcpAddress.toNetworkAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 1001)));
        domain.resolve(TcpAddress.toNetworkAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 1002)));
        advance(SECOND, domain);
        domain.resolve(TcpAddress.toNetworkAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 1003)));

        assertThat(domain.peers()).hasSize(2);
        assertThat(TcpDomains.count(domain, TcpCounter.PEERS_EVICTED)).isEqualTo(1);
        final MemorySegment source = arena.allocate(8);
        domain.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, domain.register(source, Device.host()), 8)
                .target(first, 0, 0, 1));
        assertThat(events.failed.get(1L)).isInstanceOf(InvalidRequestException.class);
    }

    @Test
    void withoutAKeyOnlyLoopbackIsBoundUnlessInsecureIsSet() {
        final EngineConfig wildcard = TcpDomains.config("0.0.0.0", 0, Map.of());
        assertThatThrownBy(() ->
                        new TcpTransport().openDomain(new DomainContext(wildcard, 0, 0, new RecordingDomainListener())))
                .isInstanceOf(TransportUnavailableException.class)
                .hasMessageContaining("without a cluster key")
                .hasMessageContaining(TcpSettings.INSECURE);

        final EngineConfig insecure = TcpDomains.config("0.0.0.0", 0, Map.of(TcpSettings.INSECURE, "true"));
        new TcpTransport()
                .openDomain(new DomainContext(insecure, 0, 0, new RecordingDomainListener()))
                .close();
        final EngineConfig keyed = TcpDomains.config("0.0.0.0", 0, KEYED);
        new TcpTransport()
                .openDomain(new DomainContext(keyed, 0, 0, new RecordingDomainListener()))
                .close();
    }

    @Test
    void badKeyOptionsAreReportedByName() {
        final TcpTransport tcp = new TcpTransport();
        assertThat(tcp.unavailabilityCause(TcpDomains.config(0, Map.of(TcpSettings.CLUSTER_KEY, "short"))))
                .contains("neither hex nor base64");
        // a phrase that happens to be base64 still decodes to too few bytes
        assertThat(tcp.unavailabilityCause(
                        TcpDomains.config(0, Map.of(TcpSettings.CLUSTER_KEY, "a-cluster-key-of-32-bytes-length"))))
                .contains("decodes to 24 bytes, fewer than 32");
        assertThat(tcp.unavailabilityCause(
                        TcpDomains.config(0, Map.of(TcpSettings.CLUSTER_KEY, "my cluster passphrase, long enough!"))))
                .contains("neither hex nor base64")
                .doesNotContain("passphrase");
        assertThat(tcp.unavailabilityCause(TcpDomains.config(0, Map.of(TcpSettings.CLUSTER_KEY, "ab".repeat(40)))))
                .contains("not random");
        assertThat(tcp.unavailabilityCause(TcpDomains.config(
                        0, Map.of(TcpSettings.CLUSTER_KEY, KEY, TcpSettings.CLUSTER_KEY_FILE, "/nonexistent"))))
                .contains("not both");
        assertThat(tcp.unavailabilityCause(
                        TcpDomains.config(0, Map.of(TcpSettings.CLUSTER_KEY_FILE, "/nonexistent/key"))))
                .contains("cannot read");
    }

    private static long refusedHandshakes(final TcpDomain target) {
        return TcpDomains.count(target, TcpCounter.HANDSHAKES_REFUSED)
                + TcpDomains.count(target, TcpCounter.HANDSHAKES_REFUSED_PER_SOURCE);
    }

    private static long directMemoryUsed() {
        return ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(pool -> pool.getName().equals("direct"))
                .mapToLong(BufferPoolMXBean::getMemoryUsed)
                .sum();
    }
}
