package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TcpDomainWriteTest {

    private final Arena arena = Arena.ofShared();
    private final RecordingDomainListener initiatorEvents = new RecordingDomainListener();
    private final RecordingDomainListener targetEvents = new RecordingDomainListener();
    private TcpDomain initiator;
    private TcpDomain target;

    @BeforeEach
    void open() {
        initiator = TcpDomains.open(initiatorEvents);
        target = TcpDomains.open(targetEvents);
    }

    @AfterEach
    void close() {
        initiator.close();
        target.close();
        arena.close();
    }

    @Test
    void writeLandsInTheTargetRegionAndCompletesOnAck() {
        final MemorySegment source = pattern(100_000, 1);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment destination = filled(200_000, (byte) 0);
        final long rkey = target.register(destination, Device.host());
        final long peer = initiator.resolve(target.address());

        initiator.write(new WriteDescriptor()
                .token(7)
                .source(source, 1000, sourceKey, 50_000)
                .target(peer, destination.address(), 3000, rkey));
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);

        assertThat(initiatorEvents.completed).containsEntry(7L, 50_000L);
        assertThat(destination.asSlice(3000, 50_000).mismatch(source.asSlice(1000, 50_000)))
                .isEqualTo(-1);
        assertThat(destination.asSlice(0, 3000).mismatch(filled(3000, (byte) 0)))
                .isEqualTo(-1);
        assertThat(targetEvents.bytesReceived).isEqualTo(50_000);
        assertThat(targetEvents.imms).isEmpty();
    }

    @Test
    void writeWithImmDeliversDataAndTheImm() {
        final MemorySegment source = pattern(4096, 2);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment destination = filled(4096, (byte) 0);
        final long rkey = target.register(destination, Device.host());
        final long peer = initiator.resolve(target.address());

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, 4096)
                .target(peer, 0, 0, rkey)
                .imm(true, 0xCAFE));
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);

        assertThat(initiatorEvents.completed).containsEntry(1L, 4096L);
        assertThat(targetEvents.imms).containsExactly(0xCAFE);
        assertThat(destination.mismatch(source)).isEqualTo(-1);
    }

    @Test
    void immOnlyWriteDeliversJustTheImm() {
        final MemorySegment source = pattern(64, 3);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment destination = filled(64, (byte) 9);
        final long rkey = target.register(destination, Device.host());
        final long peer = initiator.resolve(target.address());

        initiator.write(new WriteDescriptor()
                .token(5)
                .source(source, 0, sourceKey, 0)
                .target(peer, 0, 0, rkey)
                .imm(true, -1));
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);

        assertThat(initiatorEvents.completed).containsEntry(5L, 0L);
        assertThat(targetEvents.imms).containsExactly(-1);
        assertThat(targetEvents.bytesReceived).isZero();
        assertThat(destination.mismatch(filled(64, (byte) 9))).isEqualTo(-1);
    }

    @Test
    void manyWritesOfMixedSizesAllLandAndComplete() {
        final int pages = 600;
        final int pageSize = 40_000;
        final MemorySegment source = pattern((long) pages * pageSize, 4);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment destination = filled((long) pages * pageSize, (byte) 0);
        final long rkey = target.register(destination, Device.host());
        final long peer = initiator.resolve(target.address());
        final Random random = new Random(42);
        final int[] lengths = new int[pages];
        long expectedBytes = 0;
        for (int page = 0; page < pages; page++) {
            // Mix tiny, inline-sized and large payloads so both write paths interleave on one connection.
            lengths[page] = switch (page % 3) {
                case 0 -> random.nextInt(64);
                case 1 -> 1 + random.nextInt(16 * 1024);
                default -> 16 * 1024 + random.nextInt(pageSize - 16 * 1024);
            };
            expectedBytes += lengths[page];
            final long offset = (long) (pages - 1 - page) * pageSize;
            initiator.write(new WriteDescriptor()
                    .token(page)
                    .source(source, (long) page * pageSize, sourceKey, lengths[page])
                    .target(peer, 0, offset, rkey)
                    .imm(true, page));
        }
        pollUntil(() -> initiatorEvents.ended() == pages, initiator, target);

        assertThat(initiatorEvents.failed).isEmpty();
        assertThat(targetEvents.imms).hasSize(pages);
        assertThat(targetEvents.bytesReceived).isEqualTo(expectedBytes);
        for (int page = 0; page < pages; page++) {
            final long offset = (long) (pages - 1 - page) * pageSize;
            assertThat(destination
                            .asSlice(offset, lengths[page])
                            .mismatch(source.asSlice((long) page * pageSize, lengths[page])))
                    .as("page %d", page)
                    .isEqualTo(-1);
        }
    }

    @Test
    void largeWritesSurviveTinySocketBuffersAndPartialReadsAndWrites() {
        final TcpDomain smallInitiator =
                TcpDomains.open(initiatorEvents, 0, 1, Map.of(TcpTransport.SOCKET_BUFFER_OPTION, "4096"));
        final TcpDomain smallTarget =
                TcpDomains.open(targetEvents, 0, 2, Map.of(TcpTransport.SOCKET_BUFFER_OPTION, "4096"));
        try {
            final MemorySegment source = pattern(3 * 1024 * 1024 + 17, 5);
            final long sourceKey = smallInitiator.register(source, Device.host());
            final MemorySegment destination = filled(source.byteSize(), (byte) 0);
            final long rkey = smallTarget.register(destination, Device.host());
            final long peer = smallInitiator.resolve(smallTarget.address());
            for (int i = 0; i < 3; i++) {
                smallInitiator.write(new WriteDescriptor()
                        .token(i)
                        .source(source, i * 1024L * 1024, sourceKey, 1024 * 1024 + (i == 2 ? 17 : 0))
                        .target(peer, 0, i * 1024L * 1024, rkey)
                        .imm(true, i));
            }
            pollUntil(() -> initiatorEvents.ended() == 3, smallInitiator, smallTarget);

            assertThat(initiatorEvents.failed).isEmpty();
            assertThat(destination.mismatch(source)).isEqualTo(-1);
            assertThat(targetEvents.imms).containsExactly(0, 1, 2);
        } finally {
            smallInitiator.close();
            smallTarget.close();
        }
    }

    @Test
    void outOfBoundsWriteIsRefusedAndLeavesTargetMemoryUntouched() {
        final MemorySegment source = pattern(8192, 6);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment destination = pattern(4096, 7);
        final MemorySegment before = copy(destination);
        final long rkey = target.register(destination, Device.host());
        final long peer = initiator.resolve(target.address());

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, 100)
                .target(peer, 0, 4000, rkey)
                .imm(true, 1));
        initiator.write(new WriteDescriptor()
                .token(2)
                .source(source, 0, sourceKey, 8192)
                .target(peer, 0, 0, rkey));
        initiator.write(new WriteDescriptor()
                .token(3)
                .source(source, 0, sourceKey, 0)
                .target(peer, 0, 4097, rkey)
                .imm(true, 3));
        initiator.write(new WriteDescriptor()
                .token(4)
                .source(source, 0, sourceKey, 16)
                .target(peer, 0, Long.MAX_VALUE - 8, rkey));
        initiator.write(new WriteDescriptor()
                .token(5)
                .source(source, 0, sourceKey, 96)
                .target(peer, 0, 4000, rkey)
                .imm(true, 5));
        pollUntil(() -> initiatorEvents.ended() == 5, initiator, target);

        for (long token = 1; token <= 4; token++) {
            assertThat(initiatorEvents.failed.get(token))
                    .isInstanceOfSatisfying(RemoteAccessException.class, e -> assertThat(e.reason())
                            .isEqualTo(RemoteAccessException.Reason.OUT_OF_BOUNDS))
                    .hasMessageNotContaining(Long.toHexString(rkey)) // keys never appear in messages
                    .hasMessageContaining("region size 4096");
        }
        assertThat(initiatorEvents.failed.get(1L)).hasMessageContaining("offset 4000 of length 100");
        // The refused payloads were skipped exactly, so the write after them still lands.
        assertThat(initiatorEvents.completed).containsOnlyKeys(5L);
        assertThat(targetEvents.imms).containsExactly(5);
        assertThat(destination.asSlice(0, 4000).mismatch(before.asSlice(0, 4000)))
                .isEqualTo(-1);
        assertThat(destination.asSlice(4000, 96).mismatch(source.asSlice(0, 96)))
                .isEqualTo(-1);
    }

    @Test
    void writesWithAStaleOrUnknownKeyAreRefusedAndLeaveMemoryUntouched() {
        final MemorySegment source = pattern(1024, 8);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment destination = pattern(1024, 9);
        final MemorySegment before = copy(destination);
        final long rkey = target.register(destination, Device.host());
        final long peer = initiator.resolve(target.address());
        target.deregister(rkey);

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, 1024)
                .target(peer, 0, 0, rkey)
                .imm(true, 1));
        initiator.write(new WriteDescriptor()
                .token(2)
                .source(source, 0, sourceKey, 0)
                .target(peer, 0, 0, rkey ^ 0x5555)
                .imm(true, 2));
        pollUntil(() -> initiatorEvents.ended() == 2, initiator, target);

        assertThat(initiatorEvents.failed.values()).hasSize(2).allSatisfy(e -> assertThat(e)
                .isInstanceOfSatisfying(RemoteAccessException.class, r -> assertThat(r.reason())
                        .isEqualTo(RemoteAccessException.Reason.UNKNOWN_KEY)));
        assertThat(targetEvents.imms).isEmpty();
        assertThat(destination.mismatch(before)).isEqualTo(-1);
    }

    @Test
    void keysAreNonZeroAndUniqueWithinADomain() {
        final java.util.Set<Long> keys = new java.util.HashSet<>();
        for (int i = 0; i < 200; i++) {
            keys.add(target.register(arena.allocate(8), Device.host()));
        }
        assertThat(keys).hasSize(200).doesNotContain(0L);
    }

    @Test
    void deviceMemoryWithoutAUsableProviderIsRefusedWithADeviceUnavailableError() {
        assertThatThrownBy(() -> target.register(arena.allocate(64), Device.cuda(7)))
                .isInstanceOf(DeviceUnavailableException.class)
                .hasMessageMatching("(?s).*(device memory 'cuda' is unavailable|no cuda device 7).*");
    }

    @Test
    void writeOutsideTheSourceFailsAtOnceWithoutTraffic() {
        final MemorySegment source = pattern(100, 10);
        final long sourceKey = initiator.register(source, Device.host());
        final long peer = initiator.resolve(target.address());

        initiator.write(
                new WriteDescriptor().token(1).source(source, 50, sourceKey, 51).target(peer, 0, 0, 1));

        assertThat(initiatorEvents.failed.get(1L))
                .isInstanceOf(dev.transferengine.exceptions.RegionBoundsException.class);
        assertThat(initiator.peers()).singleElement().satisfies(p -> assertThat(p.state())
                .isEqualTo(dev.transferengine.PeerState.IDLE));
    }

    private MemorySegment pattern(final long size, final int seed) {
        final MemorySegment segment = arena.allocate(size);
        final Random random = new Random(seed);
        for (long i = 0; i < size; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
        }
        return segment;
    }

    private MemorySegment filled(final long size, final byte value) {
        return arena.allocate(size).fill(value);
    }

    private MemorySegment copy(final MemorySegment segment) {
        return arena.allocate(segment.byteSize()).copyFrom(segment);
    }
}
