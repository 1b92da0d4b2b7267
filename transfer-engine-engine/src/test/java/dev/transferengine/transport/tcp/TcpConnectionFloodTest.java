package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngine;
import dev.transferengine.test.Checksums;
import dev.transferengine.test.PeerProcesses;
import dev.transferengine.test.TlsFixture;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 9's first attack on a real process boundary: an engine in a child JVM with a 64 MiB heap and 64 MiB of
 * direct memory (before the fix, ~820 idle connects ran a 256 MiB JVM out of direct memory and killed its worker)
 * gets 1,500 idle connections while a legitimate writer, connected before, keeps writing. Every write succeeds, the
 * data arrives intact, the engine stays healthy and counts the connections it refused. The same holds with TLS,
 * where each connection that has not authenticated yet also holds a TLS engine.
 */
class TcpConnectionFloodTest {

    private static final int FLOOD = 1_500;
    private static final int MAX_INBOUND = 128;
    private static final int WRITES = 2_000;
    private static final int SIZE = 64 * 1024;

    @ParameterizedTest(name = "tls={0}")
    @ValueSource(booleans = {false, true})
    void anIdleConnectionFloodAtASmallHeapLeavesALegitimateWriterWithZeroFailures(final boolean tls) throws Exception {
        final List<String> options = new ArrayList<>(
                List.of("tcp", "1", Integer.toString(SIZE), "tcp.maxInboundConnections=" + MAX_INBOUND));
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
            final List<SocketChannel> flood = new ArrayList<>(FLOOD);
            final TransferCounters counters = new TransferCounters();
            try {
                int submitted = 0;
                for (int i = 0; i < FLOOD; i++) {
                    flood.add(SocketChannel.open(address));
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
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (counters.completed() < WRITES && System.nanoTime() - deadline < 0) {
                    Thread.sleep(5);
                }
                final String[] health = target.ask("HEALTH", "HEALTH");
                assertThat(counters.completed()).isEqualTo(WRITES);
                assertThat(counters.failed()).as("failed legitimate writes").isZero();
                assertThat(health[1]).as("engine healthy").isEqualTo("true");
                assertThat(refused(health[2])).as(health[2]).isGreaterThanOrEqualTo(FLOOD - MAX_INBOUND);
                assertThat(target.ask("CRC", "CRC")[1]).isEqualTo(Long.toString(Checksums.crc32c(data)));
            } finally {
                for (final SocketChannel channel : flood) {
                    closeQuietly(channel);
                }
            }
        }
    }

    private static long refused(final String events) {
        for (final String event : events.split(",", -1)) {
            if (event.startsWith("refusals/connection_limit=")) {
                return Long.parseLong(event.substring(event.indexOf('=') + 1));
            }
        }
        return 0;
    }

    private static void closeQuietly(final SocketChannel channel) {
        try {
            channel.close();
        } catch (final IOException ignored) {
            // the test is over
        }
    }
}
