package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.TransportEvent;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.test.TlsFixture;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 16, item 1: a host that a member dials (a stale descriptor, a reused address) forwards the handshake to
 * another member byte for byte. The member it relays to proves its own address, so the dialling member refuses the
 * handshake, counts it, and never sends AUTH: the relay gets no authenticated session, and nothing lands. With TLS
 * too: the relay forwards the records it cannot read, the TLS session between the two members comes up (any member's
 * certificate is trusted, host names are not checked), and the cluster-key handshake inside it refuses.
 */
class TcpRelayTest {

    private static final String KEY = "eJAYUQCjrxilHKAvc7GK5pJOqM9xQa8TZ/WEPFILIKA=";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int SIZE = 4096;

    /** With TLS the relay passes the records through; TLS checks no host name, the proven address still counts. */
    @ParameterizedTest(name = "tls={0}")
    @ValueSource(booleans = {false, true})
    void aRelayedHandshakeIsRefusedAndNothingLands(final boolean tls) throws Exception {
        try (TransferEngine member = keyed(tls);
                TransferEngine target = keyed(tls);
                Arena arena = Arena.ofShared();
                Relay relay = new Relay(TcpAddress.toSocketAddress(target.mainAddress()))) {
            final MemorySegment source = arena.allocate(SIZE);
            source.fill((byte) 0x5A);
            final MemorySegment landing = arena.allocate(SIZE);
            final MemoryRegion from = member.register(source, Device.host());
            final RegionDescriptor genuine =
                    target.register(landing, Device.host()).descriptor();
            // The descriptor the member holds names the relay's address, as a stale one naming a reused IP would.
            final RegionDescriptor viaRelay = new RegionDescriptor(
                    genuine.address(),
                    genuine.length(),
                    List.of(new RegionDescriptor.Nic(
                            relay.address(), genuine.nic(0).rkey())));

            assertThatThrownBy(() -> member.submit(SingleWrite.of(from, 0, SIZE, viaRelay, 0))
                            .get())
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(PeerUnreachableException.class)
                    .hasMessageContaining(
                            "the acceptor proved " + target.mainAddress().describe());

            assertThat(relay.forwarded())
                    .as("the relay really was in the middle")
                    .isPositive();
            assertThat(count(member, "address_mismatch")).isEqualTo(1);
            assertThat(landing.get(ValueLayout.JAVA_BYTE, 0))
                    .as("nothing landed")
                    .isZero();
            assertThat(target.peers()).as("the target authenticated nobody").isEmpty();

            // The same write to the genuine descriptor works: the keys match, only the relay was refused.
            assertThat(member.submit(SingleWrite.of(from, 0, SIZE, genuine, 0))).succeedsWithin(WAIT);
            assertThat(landing.get(ValueLayout.JAVA_BYTE, SIZE - 1)).isEqualTo((byte) 0x5A);
        }
    }

    private static TransferEngine keyed(final boolean tls) {
        final TransferEngineBuilder builder = TransferEngine.builder()
                .transport("tcp")
                .option(TcpSettings.CLUSTER_KEY, KEY)
                .drainTimeout(Duration.ofSeconds(2));
        return (tls ? builder.tls(TlsFixture.trusted()) : builder).build();
    }

    private static long count(final TransferEngine engine, final String reason) {
        return engine.transportEvents().stream()
                .filter(event -> event.reason().equals(reason))
                .mapToLong(TransportEvent::count)
                .sum();
    }

    /** A loopback port that forwards every connection to {@code target} byte for byte, both ways. */
    private static final class Relay implements AutoCloseable {

        private final ServerSocket server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        private final InetSocketAddress target;
        private final AtomicLong forwarded = new AtomicLong();

        Relay(final InetSocketAddress target) throws IOException {
            this.target = target;
            Thread.ofPlatform().daemon().start(this::acceptAll);
        }

        NetworkAddress address() {
            return TcpAddress.toNetworkAddress(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()));
        }

        long forwarded() {
            return forwarded.get();
        }

        private void acceptAll() {
            while (!server.isClosed()) {
                try {
                    final Socket dialled = server.accept();
                    final Socket onward = new Socket(target.getAddress(), target.getPort());
                    Thread.ofPlatform().daemon().start(() -> pipe(dialled, onward));
                    Thread.ofPlatform().daemon().start(() -> pipe(onward, dialled));
                } catch (final IOException e) {
                    return; // closed
                }
            }
        }

        private void pipe(final Socket from, final Socket to) {
            final byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) >= 0) {
                    out.write(buffer, 0, read);
                    out.flush();
                    forwarded.addAndGet(read);
                }
            } catch (final IOException ended) {
                // either side closed: the relay's job is over
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }

        private static void closeQuietly(final Socket socket) {
            try {
                socket.close();
            } catch (final IOException ignored) {
                // closing a relayed socket
            }
        }

        @Override
        public void close() throws IOException {
            server.close(); // ends acceptAll; the pipes end with their sockets
        }
    }
}
