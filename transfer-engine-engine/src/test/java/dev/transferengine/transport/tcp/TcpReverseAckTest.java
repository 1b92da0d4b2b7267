package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reverse ACKs ({@link TcpFrame#REVERSE_ACK}): between two domains that both speak them, the ACK of a request rides
 * back in front of the next request going the other way, or leaves on its own once {@code tcp.reverseAckMicros}
 * passed; a peer that does not speak them (an earlier v3 release announces no features) is answered as before. Both
 * domains run on manual clocks, so "within the bound" is a matter of what the clocks say, not of real time.
 */
class TcpReverseAckTest {

    /** The default bound, {@code tcp.reverseAckMicros} = 20. */
    private static final long BOUND_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

    private final Arena arena = Arena.ofShared();
    private final RecordingDomainListener clientEvents = new RecordingDomainListener();
    private final RecordingDomainListener serverEvents = new RecordingDomainListener();
    private final AtomicLong clientClock = new AtomicLong(1_000_000_000L);
    private final AtomicLong serverClock = new AtomicLong(1_000_000_000L);
    private final TcpDomain server = TcpDomains.open(serverEvents, Map.of(), serverClock::get);
    private TcpDomain client = TcpDomains.open(clientEvents, Map.of(), clientClock::get);

    @AfterEach
    void close() {
        client.close();
        server.close();
        arena.close();
    }

    /**
     * The client's ping is placed at the server, whose ACK waits (the clocks stand still, so the bound never passes)
     * until the server's pong carries it: the ping completes with the pong's arrival, never before.
     */
    @Test
    void theAckOfAPingRidesOnThePongAndCompletesThePing() {
        final Link link = connect();
        ping(link, 10);
        for (int i = 0; i < 100; i++) {
            client.poll();
            server.poll();
        }
        assertThat(clientEvents.ended(10))
                .as("the ping's ACK waits at the server for a request to ride on")
                .isFalse();

        write(server, link.toClient, link.clientKey, 11); // the pong
        pollUntil(() -> clientEvents.imms.contains(11), server, client);
        assertThat(clientEvents.completed)
                .as("the ping completed with the pong")
                .containsKey(10L);
        assertThat(clientEvents.failed).isEmpty();
        assertThat(TcpDomains.count(client, TcpCounter.MALFORMED_FRAMES)).isZero();
        assertThat(TcpDomains.count(server, TcpCounter.MALFORMED_FRAMES)).isZero();
    }

    /** A ping the server never replies to still gets its ACK, on its own connection, once the bound passed. */
    @Test
    void aRequestNothingRepliesToIsAcknowledgedOnceTheBoundPassed() {
        final Link link = connect();
        ping(link, 10);
        serverClock.addAndGet(BOUND_NANOS - 1);
        for (int i = 0; i < 100; i++) {
            server.poll();
            client.poll();
        }
        assertThat(clientEvents.ended(10))
                .as("the ACK is held while the bound has not passed")
                .isFalse();

        serverClock.addAndGet(1);
        pollUntil(() -> clientEvents.ended(10), server, client);
        assertThat(clientEvents.completed).containsKey(10L);
        assertThat(clientEvents.failed).isEmpty();
    }

    /**
     * A peer that announces no features, as an engine of an earlier v3 release (here: reverse ACKs turned off), gets
     * every ACK on its own connection at once, though the server posted to it lately and its clock stands still.
     */
    @Test
    void aPeerWithoutReverseAcksIsAnsweredOnItsOwnConnectionAtOnce() {
        client.close();
        client = TcpDomains.open(clientEvents, Map.of(TcpSettings.REVERSE_ACK, "0"), clientClock::get);
        final Link link = connect();
        ping(link, 10);
        pollUntil(() -> clientEvents.ended(10), client, server);
        assertThat(clientEvents.completed).containsKey(10L);

        write(server, link.toClient, link.clientKey, 11); // and the server's requests are answered as usual
        pollUntil(() -> serverEvents.ended(11), server, client);
        assertThat(serverEvents.completed).containsKey(11L);
        assertThat(TcpDomains.count(server, TcpCounter.MALFORMED_FRAMES)).isZero();
    }

    /** A REVERSE_ACK from a connector that did not announce the feature breaks the protocol: the connection closes. */
    @Test
    void aReverseAckFromAPeerThatDidNotAgreeToThemIsMalformed() throws IOException {
        try (RawPeer peer = new RawPeer(server).authenticate(server)) {
            peer.send(RawPeer.header(TcpFrame.REVERSE_ACK, 0, 1, 0, 0, 0));
            pollUntil(() -> TcpDomains.count(server, TcpCounter.MALFORMED_FRAMES) == 1, server);
        }
    }

    /** Both directions connected, authenticated and answered, then the server posted to the client just now. */
    private Link connect() {
        final long serverKey = server.register(arena.allocate(64), Device.host());
        final long clientKey = client.register(arena.allocate(64), Device.host());
        final long toServer = client.resolve(server.address());
        final long toClient = server.resolve(client.address());
        write(client, toServer, serverKey, 1);
        write(server, toClient, clientKey, 2);
        // the clocks move past the bound, so ACKs held while the connections came up leave
        pollUntil(
                () -> {
                    clientClock.addAndGet(BOUND_NANOS);
                    serverClock.addAndGet(BOUND_NANOS);
                    return clientEvents.ended(1) && serverEvents.ended(2);
                },
                client,
                server);
        write(server, toClient, clientKey, 3); // traffic goes both ways: the server holds ACKs for the client
        pollUntil(() -> clientEvents.imms.contains(3), server, client);
        return new Link(toServer, toClient, serverKey, clientKey);
    }

    /** The client writes imm {@code imm} to the server and polls until the server placed it. */
    private void ping(final Link link, final int imm) {
        write(client, link.toServer, link.serverKey, imm);
        pollUntil(() -> serverEvents.imms.contains(imm), client, server);
    }

    /** An imm-only write of {@code imm}, its token the imm too. */
    private static void write(final TcpDomain sender, final long handle, final long rkey, final int imm) {
        sender.write(new WriteDescriptor()
                .token(imm)
                .source(MemorySegment.NULL, 0, 0, 0)
                .target(handle, 0, 0, rkey)
                .imm(true, imm));
    }

    private record Link(long toServer, long toClient, long serverKey, long clientKey) {}
}
