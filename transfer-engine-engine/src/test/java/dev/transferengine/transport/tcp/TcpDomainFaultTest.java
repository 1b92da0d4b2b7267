package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.PeerState;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TcpDomainFaultTest {

    private final Arena arena = Arena.ofShared();
    private final RecordingDomainListener initiatorEvents = new RecordingDomainListener();
    private final RecordingDomainListener targetEvents = new RecordingDomainListener();
    private final RecordingDomainListener bystanderEvents = new RecordingDomainListener();
    private final TcpDomain initiator = TcpDomains.open(initiatorEvents);

    @AfterEach
    void close() {
        initiator.close();
        arena.close();
    }

    @Test
    void losingAPeerFailsItsInFlightWritesOnlyAndALaterWriteReconnects() {
        final TcpDomain target = TcpDomains.open(targetEvents);
        final TcpDomain bystander = TcpDomains.open(bystanderEvents);
        final int targetPort = TcpDomains.port(target);
        final MemorySegment source = arena.allocate(1 << 20);
        final long sourceKey = initiator.register(source, Device.host());
        final long targetKey = target.register(arena.allocate(1 << 20), Device.host());
        final long bystanderKey = bystander.register(arena.allocate(1 << 20), Device.host());
        final long targetPeer = initiator.resolve(target.address());
        final long bystanderPeer = initiator.resolve(bystander.address());

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, 4096)
                .target(targetPeer, 0, 0, targetKey)
                .imm(true, 1));
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);
        // The target is no longer polled, so it answers nothing, and then dies with these writes in flight.
        for (long token = 10; token < 20; token++) {
            initiator.write(new WriteDescriptor()
                    .token(token)
                    .source(source, 0, sourceKey, 64 * 1024)
                    .target(targetPeer, 0, 0, targetKey)
                    .imm(true, 2));
        }
        initiator.write(new WriteDescriptor()
                .token(30)
                .source(source, 0, sourceKey, 4096)
                .target(bystanderPeer, 0, 0, bystanderKey)
                .imm(true, 3));
        pollUntil(() -> initiatorEvents.completed.containsKey(30L), initiator, bystander);
        target.close();
        pollUntil(() -> initiatorEvents.ended() == 12, initiator, bystander);

        for (long token = 10; token < 20; token++) {
            assertThat(initiatorEvents.failed.get(token))
                    .isInstanceOfSatisfying(PeerUnreachableException.class, e -> assertThat(e.peer())
                            .isEqualTo(target.address()))
                    .hasMessageContaining("127.0.0.1:" + targetPort);
        }
        assertThat(state(target.address())).isEqualTo(PeerState.UNREACHABLE);

        initiator.write(new WriteDescriptor()
                .token(31)
                .source(source, 0, sourceKey, 4096)
                .target(bystanderPeer, 0, 0, bystanderKey)
                .imm(true, 4));
        pollUntil(() -> initiatorEvents.ended() == 13, initiator, bystander);
        assertThat(initiatorEvents.completed).containsKey(31L);

        final RecordingDomainListener restartedEvents = new RecordingDomainListener();
        final TcpDomain restarted = TcpDomains.open(restartedEvents, targetPort, 0, Map.of());
        try {
            final MemorySegment destination = arena.allocate(4096);
            final long restartedKey = restarted.register(destination, Device.host());
            assertThat(restarted.address()).isEqualTo(target.address());

            initiator.write(new WriteDescriptor()
                    .token(40)
                    .source(source, 0, sourceKey, 4096)
                    .target(targetPeer, 0, 0, restartedKey)
                    .imm(true, 5));
            pollUntil(() -> initiatorEvents.ended() == 14, initiator, restarted, bystander);

            assertThat(initiatorEvents.completed).containsKey(40L);
            assertThat(restartedEvents.imms).containsExactly(5);
            assertThat(state(target.address())).isEqualTo(PeerState.CONNECTED);
            assertThat(TcpDomains.count(initiator, TcpCounter.PEERS_RESTARTED)).isEqualTo(1);
            assertThat(initiator.failure()).isNull();
        } finally {
            restarted.close();
            bystander.close();
        }
    }

    @Test
    void refusedConnectFailsTheWriteAndMarksThePeerUnreachable() throws IOException {
        final int freePort;
        try (ServerSocket probe = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            freePort = probe.getLocalPort();
        }
        final NetworkAddress nobody =
                TcpAddress.toNetworkAddress(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), freePort));
        final long peer = initiator.resolve(nobody);
        final MemorySegment source = arena.allocate(64);
        final long sourceKey = initiator.register(source, Device.host());

        initiator.write(
                new WriteDescriptor().token(1).source(source, 0, sourceKey, 64).target(peer, 0, 0, 1));
        initiator.send(2, peer, source);
        pollUntil(() -> initiatorEvents.ended() == 2, initiator);

        assertThat(initiatorEvents.failed.get(1L))
                .isInstanceOf(PeerUnreachableException.class)
                .hasMessageContaining("127.0.0.1:" + freePort);
        assertThat(initiatorEvents.failed.get(2L)).isInstanceOf(PeerUnreachableException.class);
        assertThat(initiator.peers()).singleElement().satisfies(p -> {
            assertThat(p.unreachable()).isTrue();
            assertThat(p.lastError()).isNotEmpty();
        });
    }

    @Test
    void closeFailsEverythingPendingWithEngineClosed() {
        final TcpDomain target = TcpDomains.open(targetEvents);
        try {
            final MemorySegment source = arena.allocate(64 * 1024);
            final long sourceKey = initiator.register(source, Device.host());
            final long rkey = target.register(arena.allocate(64 * 1024), Device.host());
            final long peer = initiator.resolve(target.address());
            for (long token = 0; token < 5; token++) { // the target is never polled: nothing is answered
                initiator.write(new WriteDescriptor()
                        .token(token)
                        .source(source, 0, sourceKey, 64 * 1024)
                        .target(peer, 0, 0, rkey)
                        .imm(true, 1));
            }
            initiator.send(9, peer, source.asSlice(0, 10));
            initiator.poll();

            initiator.close();
            initiator.close();

            assertThat(initiatorEvents.failed).as("5 writes and a send").hasSize(6);
            assertThat(initiatorEvents.failed.values()).allSatisfy(e -> assertThat(e)
                    .isInstanceOf(EngineClosedException.class)
                    .hasMessageContaining("domain closed"));
            assertThat(initiatorEvents.failed.get(9L)).isInstanceOf(EngineClosedException.class);

            initiator.write(new WriteDescriptor()
                    .token(20)
                    .source(source, 0, sourceKey, 8)
                    .target(peer, 0, 0, rkey));
            assertThat(initiatorEvents.failed.get(20L)).isInstanceOf(EngineClosedException.class);
            assertThat(initiator.poll()).isZero();
            assertThat(targetEvents.imms).isEmpty();
        } finally {
            target.close();
        }
    }

    @Test
    void aPortInUseMakesOpeningFailWithTheReason() {
        final TcpDomain first = TcpDomains.open(targetEvents);
        try {
            assertThatThrownBy(() -> TcpDomains.open(targetEvents, TcpDomains.port(first), 0, Map.of()))
                    .isInstanceOf(TransportUnavailableException.class)
                    .hasMessageContaining("cannot listen on 127.0.0.1:" + TcpDomains.port(first));
        } finally {
            first.close();
        }
    }

    @Test
    void peersSeeEachOtherAfterTraffic() {
        final TcpDomain target = TcpDomains.open(targetEvents);
        try {
            final MemorySegment source = arena.allocate(8);
            final long sourceKey = initiator.register(source, Device.host());
            final long rkey = target.register(arena.allocate(8), Device.host());
            initiator.write(new WriteDescriptor()
                    .token(1)
                    .source(source, 0, sourceKey, 8)
                    .target(initiator.resolve(target.address()), 0, 0, rkey));
            pollUntil(() -> initiatorEvents.ended() == 1 && !target.peers().isEmpty(), initiator, target);

            assertThat(initiator.peers()).singleElement().satisfies(p -> {
                assertThat(p.address()).isEqualTo(target.address());
                assertThat(p.state()).isEqualTo(PeerState.CONNECTED);
            });
            assertThat(target.peers()).extracting(PeerInfo::address).containsExactly(initiator.address());
            assertThat(initiator.resolve(target.address())).isEqualTo(initiator.resolve(target.address()));
        } finally {
            target.close();
        }
    }

    private PeerState state(final NetworkAddress peer) {
        return initiator.peers().stream()
                .filter(p -> p.address().equals(peer))
                .findFirst()
                .map(PeerInfo::state)
                .orElseThrow();
    }
}
