package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngine;
import dev.transferengine.test.PeerProcesses;
import dev.transferengine.test.TlsFixture;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.awaitility.Awaitility.await;

/**
 * Issue 9's first attack on a real process boundary: an engine in a child JVM with a 64 MiB heap and 64 MiB of
 * direct memory (before the fix, ~820 idle connects ran a 256 MiB JVM out of direct memory and killed its worker)
 * gets 1,500 idle connections while a legitimate writer, connected before, keeps writing. With TLS each of them
 * also sends a ClientHello, then nothing (issue 16, item 2: about 900 pending TLS handshakes filled the heap and an
 * OutOfMemoryError ended the worker for good). The engine runs on its default bounds. Only outcomes are asserted,
 * never how the refusals split between reasons (that depends on the machine's load): every legitimate write
 * succeeds, the data arrives intact, the heap stays bounded, the engine stays healthy, and a writer that connects
 * after the flood gets in.
 */
class TcpConnectionFloodTest {

    private static final int FLOOD = 1_500;
    private static final int WRITES = 2_000;
    private static final int SIZE = 64 * 1024;

    @ParameterizedTest(name = "tls={0}")
    @ValueSource(booleans = {false, true})
    void anIdleConnectionFloodAtASmallHeapLeavesALegitimateWriterWithZeroFailures(final boolean tls) throws Exception {
        final List<String> options = new ArrayList<>(List.of("tcp", "1", Integer.toString(SIZE)));
        if (tls) {
            options.add("tlsKeyStore=" + TlsFixture.nodeKeyStore());
        }
        try (PeerProcesses target = PeerProcesses.start(
                        List.of("-Xmx64m", "-XX:MaxDirectMemorySize=64m"), options.toArray(String[]::new));
                TransferEngine writer = TransferEngine.builder()
                        .tls(tls ? TlsFixture.trusted() : null)
                        .build();
                Arena arena = Arena.ofShared()) {
            final MemorySegment data = arena.allocate(SIZE);
            for (int i = 0; i < SIZE; i++) {
                data.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + 1));
            }
            final MemoryRegion source = writer.register(data, Device.host());
            final SingleWrite write = SingleWrite.of(source, 0, SIZE, target.descriptor(), 0);
            writer.submit(write).get(60, TimeUnit.SECONDS);

            final InetSocketAddress address = TcpAddress.toSocketAddress(target.address());
            final ByteBuffer clientHello = tls ? clientHello(address) : ByteBuffer.allocate(0);
            final List<SocketChannel> flood = new ArrayList<>(FLOOD);
            final TransferCounters counters = new TransferCounters();
            try {
                int submitted = 0;
                for (int i = 0; i < FLOOD; i++) {
                    final SocketChannel channel = SocketChannel.open(address);
                    flood.add(channel);
                    channel.write(clientHello.duplicate());
                    // interleaved: a write per connect or so, all while the flood builds up
                    if (submitted < WRITES && i % 3 != 2) {
                        writer.submit(write, counters);
                        submitted++;
                    }
                }
                while (submitted < WRITES) {
                    writer.submit(write, counters);
                    submitted++;
                }
                LegitimateWriter.assertUnharmed(
                        target, counters, WRITES, data, 0.5, "with the flood (tls=" + tls + ") still open");
            } finally {
                for (final SocketChannel channel : flood) {
                    closeQuietly(channel);
                }
            }
            // The worker serves newcomers again once the flood is gone: a writer from the flood's own address (it
            // shares its per-source bound) gets in as soon as the target has seen the flood's sockets close.
            final long closed = System.nanoTime();
            try (TransferEngine newcomer = TransferEngine.builder()
                    .tls(tls ? TlsFixture.trusted() : null)
                    .build()) {
                final MemoryRegion from = newcomer.register(data, Device.host());
                final SingleWrite late = SingleWrite.of(from, 0, SIZE, target.descriptor(), 0);
                await().atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(20))
                        .until(() -> succeeds(newcomer, late));
                System.out.printf(
                        "flood tls=%s: a newcomer wrote %d ms after the flood closed%n",
                        tls, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closed));
            }
        }
    }

    private static boolean succeeds(final TransferEngine engine, final SingleWrite write) throws Exception {
        try {
            engine.submit(write).get(60, TimeUnit.SECONDS);
            return true;
        } catch (final ExecutionException e) {
            return false; // refused while the flood's handshakes were still counted: try again
        }
    }

    /** A real TLS ClientHello for {@code address}, sent as is by every flood connection. */
    private static ByteBuffer clientHello(final InetSocketAddress address) throws SSLException {
        final SSLEngine client =
                TlsFixture.trusted().context().createSSLEngine(address.getHostString(), address.getPort());
        client.setUseClientMode(true);
        final ByteBuffer hello = ByteBuffer.allocate(client.getSession().getPacketBufferSize());
        client.wrap(ByteBuffer.allocate(0), hello);
        return hello.flip();
    }

    private static void closeQuietly(final SocketChannel channel) {
        try {
            channel.close();
        } catch (final IOException ignored) {
            // the test is over
        }
    }
}
