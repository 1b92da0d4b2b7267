package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.SingleRead;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A READ whose owner has no room for the connection back to the reader ({@code tcp.maxPeers}, every peer connected):
 * a reader that announced READ_FAILED is refused at once with back-pressure ({@link TcpRefusal#NO_PEER_ROOM}); one
 * that did not waits for its deadline, as before. The owner's reads and writes with its connected peer go on.
 */
class TcpReadNoPeerRoomTest {

    private static final int SIZE = 8192;

    private final Arena arena = Arena.ofShared();
    private TransferEngine owner;
    private TransferEngine connected;
    private MemoryRegion ownerRegion;
    private MemoryRegion connectedRegion;

    @BeforeEach
    void fillTheOwnersOnlyPeerSlot() throws Exception {
        owner = engine(Duration.ofMinutes(1), true, "1");
        connected = engine(Duration.ofMinutes(1), true, "4096");
        ownerRegion = owner.register(pattern(3), Device.host());
        connectedRegion = connected.register(arena.allocate(SIZE), Device.host());
        // the owner's one peer, with a connection open from the owner: nothing it could forget for a new one
        owner.submit(SingleWrite.of(ownerRegion, 0, SIZE, connectedRegion.descriptor(), 0))
                .get(1, TimeUnit.MINUTES);
    }

    @AfterEach
    void close() {
        connected.close();
        owner.close();
        arena.close();
    }

    @Test
    void aReaderTheOwnerHasNoRoomToConnectBackToFailsAtOnceWithBackPressureAndTheOwnerGoesOn() throws Exception {
        try (TransferEngine reader = engine(Duration.ofMinutes(1), true, "4096")) {
            final MemorySegment into = arena.allocate(SIZE);
            final MemoryRegion local = reader.register(into, Device.host());

            assertThatThrownBy(() -> reader.submit(SingleRead.of(ownerRegion.descriptor(), 0, SIZE, local, 0))
                            .get(2, TimeUnit.MINUTES))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(BackPressureException.class)
                    .hasMessage("peer " + hostAndPort(owner)
                            + " could not serve the READ at offset 0 of length "
                            + SIZE + ": it has no room for a connection back to this side (all its tcp.maxPeers peers"
                            + " are connected); retry later, or raise tcp.maxPeers there");
            assertThat(into.mismatch(arena.allocate(SIZE))).as("untouched").isEqualTo(-1);
        }
        final MemorySegment back = arena.allocate(SIZE);
        final MemoryRegion backRegion = connected.register(back, Device.host());
        connected
                .submit(SingleRead.of(ownerRegion.descriptor(), 0, SIZE, backRegion, 0))
                .get(1, TimeUnit.MINUTES);
        owner.submit(SingleWrite.of(ownerRegion, 0, SIZE, connectedRegion.descriptor(), 0))
                .get(1, TimeUnit.MINUTES);
        assertThat(back.mismatch(pattern(3))).isEqualTo(-1);
        assertThat(connectedRegion.segment().mismatch(pattern(3))).isEqualTo(-1);
    }

    @Test
    void aReaderWithoutReadFailuresIsAcknowledgedAndWaitsForItsDeadlineAsBefore() {
        try (TransferEngine reader = engine(Duration.ofSeconds(3), false, "4096")) {
            final MemoryRegion local = reader.register(arena.allocate(SIZE), Device.host());

            assertThatThrownBy(() -> reader.submit(SingleRead.of(ownerRegion.descriptor(), 0, SIZE, local, 0))
                            .get(2, TimeUnit.MINUTES))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(TransferTimeoutException.class);
        }
    }

    private static TransferEngine engine(final Duration timeout, final boolean readFailures, final String maxPeers) {
        return TransferEngine.builder()
                .transport("tcp")
                .bindAddress("127.0.0.1")
                .option(TcpSettings.READ_FAILURES, Boolean.toString(readFailures))
                .option(TcpSettings.MAX_PEERS, maxPeers)
                .operationTimeout(timeout)
                .build();
    }

    private static String hostAndPort(final TransferEngine engine) {
        final InetSocketAddress address = TcpAddress.toSocketAddress(engine.mainAddress());
        return address.getHostString() + ":" + address.getPort();
    }

    private MemorySegment pattern(final int seed) {
        final MemorySegment segment = arena.allocate(SIZE);
        for (int i = 0; i < SIZE; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + seed));
        }
        return segment;
    }
}
