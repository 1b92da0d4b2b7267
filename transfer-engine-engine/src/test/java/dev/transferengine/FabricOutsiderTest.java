package dev.transferengine;

import dev.transferengine.transport.fabric.FabricTestAccess;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 16, attacked from outside on fabric/tcp (tcp;ofi_rxm): the fabric transport authenticates nobody (docs/security.md,
 * "The fabric transport"), so what must hold is that a host reaching the endpoint's port without a descriptor cannot
 * disturb a member. It opens idle connections, sends random bytes and closes at once, while a member writes; the
 * member's writes all land, the receiver stays healthy, and a write after the flood lands too.
 */
class FabricOutsiderTest {

    private static final Logger LOG = LoggerFactory.getLogger(FabricOutsiderTest.class);
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int IDLE = 1_000;
    private static final int GARBAGE = 200;
    private static final int WRITES = 2_000;
    private static final int WINDOW = 64;
    private static final int SIZE = 4096;

    private final List<TransferEngine> engines = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        closeSockets();
        engines.forEach(TransferEngine::close);
        arena.close();
    }

    private void closeSockets() {
        for (final Socket socket : sockets) {
            try {
                socket.close();
            } catch (final IOException ignored) {
                // closing what the test opened; nothing to tell
            }
        }
        sockets.clear();
    }

    private TransferEngine engine() {
        final TransferEngine engine =
                FabricTestAccess.onLoopback(TransferEngine.builder(), "tcp").build();
        engines.add(engine);
        return engine;
    }

    /** The TCP port of a tcp;ofi_rxm endpoint: its name is a sockaddr_in (family, port big-endian, address). */
    private static int port(final NetworkAddress address) {
        final byte[] payload = address.payload();
        final int name = 1 + (payload[0] & 0xFF);
        assertThat(new String(payload, 1, payload[0] & 0xFF, StandardCharsets.US_ASCII))
                .startsWith("tcp");
        return ((payload[name + 2] & 0xFF) << 8) | (payload[name + 3] & 0xFF);
    }

    @Test
    void idleConnectionsAndRandomBytesFromOutsideLeaveAMembersWritesWhole() throws Exception {
        FabricTestAccess.assumeAvailable("tcp");
        final TransferEngine receiver = engine();
        final TransferEngine member = engine();
        final MemorySegment dst = arena.allocate(SIZE * 16L, 4096);
        final RegionDescriptor target = receiver.register(dst, Device.host()).descriptor();
        final MemorySegment bytes = arena.allocate(SIZE, 4096);
        for (int i = 0; i < SIZE; i++) {
            bytes.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 3));
        }
        final MemoryRegion src = member.register(bytes, Device.host());
        final InetSocketAddress endpoint =
                new InetSocketAddress(InetAddress.getLoopbackAddress(), port(receiver.mainAddress()));

        final Random random = new Random(16);
        for (int i = 0; i < IDLE; i++) {
            final Socket idle = new Socket();
            idle.connect(endpoint, 5_000);
            sockets.add(idle);
        }
        final byte[] garbage = new byte[4096];
        for (int i = 0; i < GARBAGE; i++) {
            random.nextBytes(garbage);
            try (Socket socket = new Socket()) {
                socket.connect(endpoint, 5_000);
                final OutputStream out = socket.getOutputStream();
                out.write(garbage, 0, 1 + random.nextInt(garbage.length));
                out.flush();
            } catch (final IOException refused) {
                // the provider may close a connection that sent garbage: that is fine
            }
        }
        final long start = System.nanoTime();
        final int failed = writes(member, src, target, 0, WRITES);
        final long writeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.gc();
        final long heap =
                ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        System.out.printf(
                "fabric/tcp outsider: %d idle connections held, %d garbage connections sent; %d of %d member writes"
                        + " failed in %d ms; heap %d MB after GC%n",
                IDLE, GARBAGE, failed, WRITES, writeMillis, heap >> 20);
        assertThat(failed)
                .as("member writes failed with the outsider connected")
                .isZero();
        assertThat(receiver.isHealthy()).isTrue();

        closeSockets();
        assertThat(writes(member, src, target, WRITES, 100))
                .as("member writes after the flood")
                .isZero();
        assertThat(MemorySegment.mismatch(dst, 0, SIZE, bytes, 0, SIZE)).isEqualTo(-1);
        assertThat(receiver.isHealthy()).isTrue();
    }

    /** Writes with an imm each, {@link #WINDOW} in flight; how many failed. */
    private static int writes(
            final TransferEngine member,
            final MemoryRegion src,
            final RegionDescriptor target,
            final int first,
            final int count)
            throws InterruptedException {
        int failed = 0;
        for (int start = first; start < first + count; start += WINDOW) {
            final List<CompletableFuture<Void>> window = new ArrayList<>();
            for (int i = start; i < Math.min(start + WINDOW, first + count); i++) {
                window.add(member.submit(SingleWrite.of(src, 0, SIZE, target, (long) (i % 16) * SIZE)
                        .withImm(i)));
            }
            for (final CompletableFuture<Void> write : window) {
                try {
                    write.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                } catch (final ExecutionException | java.util.concurrent.TimeoutException e) {
                    LOG.warn("member write failed: {}", e.toString());
                    failed++;
                }
            }
        }
        return failed;
    }
}
