package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.cuda.HostBackedDeviceMemory;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Device memory staged through pooled pinned chunks, with a host-backed device memory whose copies run only when
 * polled (and not at all while held), so the deferred paths are exercised deterministically. Most tests use small
 * chunks ({@value #CHUNK} bytes, 2 per direction) so that a write spans many of them.
 */
class TcpStagingTest {

    private static final Map<String, String> HOST_TEST = Map.of(DeviceMemory.OPTION, HostBackedDeviceMemory.NAME);
    private static final int CHUNK = 4096;
    private static final Map<String, String> SMALL_CHUNKS = Map.of(
            DeviceMemory.OPTION,
            HostBackedDeviceMemory.NAME,
            TcpStaging.CHUNK_BYTES_OPTION,
            Integer.toString(CHUNK),
            TcpStaging.CHUNKS_OPTION,
            "2");

    private final Arena arena = Arena.ofShared();
    private final RecordingDomainListener initiatorEvents = new RecordingDomainListener();
    private final RecordingDomainListener targetEvents = new RecordingDomainListener();
    private TcpDomain initiator;
    private TcpDomain target;

    @BeforeEach
    void open() {
        HostBackedDeviceMemory.HOLD.set(false);
        HostBackedDeviceMemory.COPIES_TO_HOST.set(0);
        HostBackedDeviceMemory.COPIES_TO_DEVICE.set(0);
        initiator = TcpDomains.open(initiatorEvents, 0, 0, HOST_TEST);
        target = TcpDomains.open(targetEvents, 0, 0, HOST_TEST);
    }

    /** Reopens both domains with small chunks. */
    private void useSmallChunks() {
        initiator.close();
        target.close();
        initiator = TcpDomains.open(initiatorEvents, 0, 0, SMALL_CHUNKS);
        target = TcpDomains.open(targetEvents, 0, 0, SMALL_CHUNKS);
    }

    @AfterEach
    void close() {
        HostBackedDeviceMemory.HOLD.set(false);
        initiator.close();
        target.close();
        arena.close();
    }

    @Test
    void moveBytesFromDeviceToDeviceThroughBothMirrors() {
        final MemorySegment source = pattern(300_000, 3);
        final long sourceKey = initiator.register(source, Device.cuda(0));
        final MemorySegment destination = arena.allocate(400_000);
        final long rkey = target.register(destination, Device.cuda(0));
        final long peer = initiator.resolve(target.address());

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 1000, sourceKey, 250_000)
                .target(peer, destination.address(), 5000, rkey)
                .imm(true, 42));
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);

        assertThat(initiatorEvents.completed).containsEntry(1L, 250_000L);
        assertThat(destination.asSlice(5000, 250_000).mismatch(source.asSlice(1000, 250_000)))
                .isEqualTo(-1);
        assertThat(targetEvents.imms).containsExactly(42);
        assertThat(HostBackedDeviceMemory.COPIES_TO_HOST.get()).isEqualTo(1);
        assertThat(HostBackedDeviceMemory.COPIES_TO_DEVICE.get()).isEqualTo(1);
    }

    @Test
    void reportAndAcknowledgeOnlyOnceThePayloadReachedTheDevice() {
        final MemorySegment source = pattern(10_000, 5);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment destination = arena.allocate(10_000);
        final long rkey = target.register(destination, Device.cuda(0));
        final long peer = initiator.resolve(target.address());
        HostBackedDeviceMemory.HOLD.set(true);

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, 10_000)
                .target(peer, destination.address(), 0, rkey)
                .imm(true, 7));
        pollUntil(() -> targetEvents.bytesReceived == 0 && pollBoth(200), initiator, target);

        assertThat(targetEvents.imms).isEmpty();
        assertThat(initiatorEvents.ended()).isZero();
        assertThat(destination.get(ValueLayout.JAVA_BYTE, 0)).isZero();

        HostBackedDeviceMemory.HOLD.set(false);
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);

        assertThat(targetEvents.imms).containsExactly(7);
        assertThat(destination.mismatch(source)).isEqualTo(-1);
    }

    @Test
    void keepAnswersInRequestOrderBehindAStagedPayload() {
        final MemorySegment source = pattern(8192, 9);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment onDevice = arena.allocate(8192);
        final long deviceKey = target.register(onDevice, Device.cuda(0));
        final MemorySegment onHost = arena.allocate(8192);
        final long hostKey = target.register(onHost, Device.host());
        final long peer = initiator.resolve(target.address());
        HostBackedDeviceMemory.HOLD.set(true);

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, 8192)
                .target(peer, onDevice.address(), 0, deviceKey)
                .imm(true, 1));
        initiator.write(new WriteDescriptor()
                .token(2)
                .source(source, 0, sourceKey, 8192)
                .target(peer, onHost.address(), 0, hostKey)
                .imm(true, 2));
        pollBoth(500);

        assertThat(initiatorEvents.ended()).isZero();
        HostBackedDeviceMemory.HOLD.set(false);
        pollUntil(() -> initiatorEvents.ended() == 2, initiator, target);

        assertThat(initiatorEvents.completed).containsOnlyKeys(1L, 2L);
        assertThat(targetEvents.imms).containsExactly(1, 2);
        assertThat(onDevice.mismatch(source)).isEqualTo(-1);
        assertThat(onHost.mismatch(source)).isEqualTo(-1);
    }

    @Test
    void queueDeviceWritesWhileEveryChunkIsBusy() {
        final int writes = HostBackedDeviceMemory.CAPACITY * 5;
        final MemorySegment source = pattern(writes * 4096, 11);
        final long sourceKey = initiator.register(source, Device.cuda(0));
        final MemorySegment destination = arena.allocate(writes * 4096);
        final long rkey = target.register(destination, Device.cuda(0));
        final long peer = initiator.resolve(target.address());

        for (int i = 0; i < writes; i++) {
            initiator.write(new WriteDescriptor()
                    .token(i)
                    .source(source, i * 4096L, sourceKey, 4096)
                    .target(peer, destination.address(), i * 4096L, rkey)
                    .imm(true, i));
        }
        pollUntil(() -> initiatorEvents.ended() == writes, initiator, target);

        assertThat(initiatorEvents.failed).isEmpty();
        assertThat(destination.mismatch(source)).isEqualTo(-1);
        assertThat(targetEvents.imms).hasSize(writes);
    }

    @Test
    void failStagedWritesWithTheDomainWhenItClosesBeforeTheCopyFinished() {
        final MemorySegment source = pattern(4096, 13);
        final long sourceKey = initiator.register(source, Device.cuda(0));
        final long rkey = target.register(arena.allocate(4096), Device.host());
        final long peer = initiator.resolve(target.address());
        HostBackedDeviceMemory.HOLD.set(true);

        initiator.write(new WriteDescriptor()
                .token(5)
                .source(source, 0, sourceKey, 4096)
                .target(peer, 0, 0, rkey));
        initiator.close();

        assertThat(initiatorEvents.failed).containsOnlyKeys(5L);
    }

    @Test
    void refuseDeviceMemoryNamingTheMissingProvider() {
        final TcpDomain domain =
                TcpDomains.open(new RecordingDomainListener(), 0, 1, Map.of(DeviceMemory.OPTION, "absent-memory"));
        try {
            assertThatThrownBy(() -> domain.register(arena.allocate(64), Device.cuda(0)))
                    .isInstanceOf(DeviceUnavailableException.class)
                    .hasMessageContaining("no device memory provider 'absent-memory'");
        } finally {
            domain.close();
        }
    }

    @Test
    void sendADeviceWriteInChunkSizedPiecesAndReportItsImmOnceAtTheEnd() {
        useSmallChunks();
        final int size = 10 * CHUNK + 123;
        final MemorySegment source = pattern(size + 7, 17);
        final long sourceKey = initiator.register(source, Device.cuda(0));
        final MemorySegment destination = arena.allocate(size + 100);
        final long rkey = target.register(destination, Device.cuda(0));
        final long peer = initiator.resolve(target.address());

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 7, sourceKey, size)
                .target(peer, destination.address(), 100, rkey)
                .imm(true, 33));
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);

        assertThat(initiatorEvents.completed).containsEntry(1L, (long) size);
        assertThat(destination.asSlice(100, size).mismatch(source.asSlice(7, size)))
                .isEqualTo(-1);
        assertThat(targetEvents.imms).containsExactly(33);
        assertThat(targetEvents.bytesReceived).isEqualTo(size);
        assertThat(HostBackedDeviceMemory.COPIES_TO_HOST.get()).isEqualTo(11);
        assertThat(HostBackedDeviceMemory.COPIES_TO_DEVICE.get()).isEqualTo(11);
    }

    @Test
    void landAHostWriteLargerThanAllChunksOnTheDeviceChunkByChunk() {
        useSmallChunks();
        final int size = 25 * CHUNK - 5;
        final MemorySegment source = pattern(size, 19);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment destination = arena.allocate(size);
        final long rkey = target.register(destination, Device.cuda(0));
        final long peer = initiator.resolve(target.address());

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, size)
                .target(peer, destination.address(), 0, rkey)
                .imm(true, 4));
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);

        assertThat(initiatorEvents.completed).containsEntry(1L, (long) size);
        assertThat(destination.mismatch(source)).isEqualTo(-1);
        assertThat(targetEvents.imms).containsExactly(4);
        assertThat(HostBackedDeviceMemory.COPIES_TO_HOST.get()).isZero();
        assertThat(HostBackedDeviceMemory.COPIES_TO_DEVICE.get()).isEqualTo(25);
    }

    @Test
    void sendADeviceWriteLargerThanAllChunksIntoHostMemory() {
        useSmallChunks();
        final int size = 9 * CHUNK + 1;
        final MemorySegment source = pattern(size, 23);
        final long sourceKey = initiator.register(source, Device.cuda(0));
        final MemorySegment destination = arena.allocate(size);
        final long rkey = target.register(destination, Device.host());
        final long peer = initiator.resolve(target.address());

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, size)
                .target(peer, destination.address(), 0, rkey)
                .imm(true, 5));
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);

        assertThat(initiatorEvents.completed).containsEntry(1L, (long) size);
        assertThat(destination.mismatch(source)).isEqualTo(-1);
        assertThat(targetEvents.imms).containsExactly(5);
        assertThat(HostBackedDeviceMemory.COPIES_TO_HOST.get()).isEqualTo(10);
        assertThat(HostBackedDeviceMemory.COPIES_TO_DEVICE.get()).isZero();
    }

    @Test
    void mixHostAndDeviceWritesInBothDirections() {
        useSmallChunks();
        final int size = 5 * CHUNK + 99;
        final MemorySegment hostSource = pattern(size, 29);
        final MemorySegment deviceSource = pattern(size, 31);
        final long hostKey = initiator.register(hostSource, Device.host());
        final long deviceKey = initiator.register(deviceSource, Device.cuda(0));
        final MemorySegment toHost = arena.allocate(2L * size);
        final MemorySegment toDevice = arena.allocate(2L * size);
        final long hostRkey = target.register(toHost, Device.host());
        final long deviceRkey = target.register(toDevice, Device.cuda(0));
        final long peer = initiator.resolve(target.address());
        final long back = target.resolve(initiator.address());
        final MemorySegment returned = arena.allocate(size);
        final long returnedRkey = initiator.register(returned, Device.cuda(0));

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(deviceSource, 0, deviceKey, size)
                .target(peer, 0, 0, deviceRkey)
                .imm(true, 1));
        initiator.write(new WriteDescriptor()
                .token(2)
                .source(hostSource, 0, hostKey, size)
                .target(peer, 0, size, deviceRkey)
                .imm(true, 2));
        initiator.write(new WriteDescriptor()
                .token(3)
                .source(deviceSource, 0, deviceKey, size)
                .target(peer, 0, 0, hostRkey)
                .imm(true, 3));
        initiator.write(new WriteDescriptor()
                .token(4)
                .source(hostSource, 0, hostKey, size)
                .target(peer, 0, size, hostRkey)
                .imm(true, 4));
        pollUntil(() -> initiatorEvents.ended() == 4, initiator, target);
        target.write(new WriteDescriptor()
                .token(5)
                .source(toDevice, 0, deviceRkey, size)
                .target(back, 0, 0, returnedRkey)
                .imm(true, 5));
        pollUntil(() -> targetEvents.ended() == 1, initiator, target);

        assertThat(initiatorEvents.completed).containsOnlyKeys(1L, 2L, 3L, 4L);
        assertThat(targetEvents.completed).containsOnlyKeys(5L);
        assertThat(toDevice.asSlice(0, size).mismatch(deviceSource)).isEqualTo(-1);
        assertThat(toDevice.asSlice(size, size).mismatch(hostSource)).isEqualTo(-1);
        assertThat(toHost.asSlice(0, size).mismatch(deviceSource)).isEqualTo(-1);
        assertThat(toHost.asSlice(size, size).mismatch(hostSource)).isEqualTo(-1);
        assertThat(returned.mismatch(deviceSource)).isEqualTo(-1);
        assertThat(targetEvents.imms).containsExactlyInAnyOrder(1, 2, 3, 4);
        assertThat(initiatorEvents.imms).containsExactly(5);
    }

    @Test
    void acknowledgeAMultiChunkPayloadOnlyAfterItsLastCopyToTheDevice() {
        useSmallChunks();
        final int size = 3 * CHUNK;
        final MemorySegment source = pattern(size, 37);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment destination = arena.allocate(size);
        final long rkey = target.register(destination, Device.cuda(0));
        final long peer = initiator.resolve(target.address());
        HostBackedDeviceMemory.HOLD.set(true);

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, size)
                .target(peer, 0, 0, rkey)
                .imm(true, 8));
        pollBoth(500);

        // Both receive chunks are full and waiting for their copies, so the third cannot even be read.
        assertThat(initiatorEvents.ended()).isZero();
        assertThat(targetEvents.imms).isEmpty();
        assertThat(HostBackedDeviceMemory.COPIES_TO_DEVICE.get()).isZero();

        HostBackedDeviceMemory.HOLD.set(false);
        pollUntil(() -> initiatorEvents.ended() == 1, initiator, target);

        assertThat(HostBackedDeviceMemory.COPIES_TO_DEVICE.get()).isEqualTo(3);
        assertThat(targetEvents.imms).containsExactly(8);
        assertThat(destination.mismatch(source)).isEqualTo(-1);
    }

    @Test
    void keepARefusalBehindAnAnswerStillWaitingForItsCopy() {
        final MemorySegment source = pattern(4096, 41);
        final long sourceKey = initiator.register(source, Device.host());
        final long deviceKey = target.register(arena.allocate(4096), Device.cuda(0));
        final long peer = initiator.resolve(target.address());
        HostBackedDeviceMemory.HOLD.set(true);

        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, 4096)
                .target(peer, 0, 0, deviceKey));
        initiator.write(new WriteDescriptor()
                .token(2)
                .source(source, 0, sourceKey, 4096)
                .target(peer, 0, 0, deviceKey + 1));
        pollBoth(500);
        HostBackedDeviceMemory.HOLD.set(false);
        pollUntil(() -> initiatorEvents.ended() == 2, initiator, target);

        assertThat(initiatorEvents.completed).containsOnlyKeys(1L);
        assertThat(initiatorEvents.failed.get(2L)).isInstanceOf(RemoteAccessException.class);
        assertThat(TcpDomains.count(initiator, TcpCounter.MALFORMED_FRAMES)
                        + TcpDomains.count(target, TcpCounter.MALFORMED_FRAMES))
                .isZero();
    }

    @Test
    void failARefusedMultiChunkDeviceWriteOnceAndReuseItsChunks() {
        useSmallChunks();
        final int size = 6 * CHUNK;
        final MemorySegment source = pattern(size, 43);
        final long sourceKey = initiator.register(source, Device.cuda(0));
        final MemorySegment destination = arena.allocate(size);
        final long rkey = target.register(destination, Device.cuda(0));
        final long peer = initiator.resolve(target.address());

        // The last pieces fall outside the region: those are refused, the write fails once.
        initiator.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, size)
                .target(peer, 0, 3L * CHUNK, rkey)
                .imm(true, 1));
        pollUntil(() -> initiatorEvents.ended() == 1 && pollBoth(50), initiator, target);
        initiator.write(new WriteDescriptor()
                .token(2)
                .source(source, 0, sourceKey, size)
                .target(peer, 0, 0, rkey)
                .imm(true, 2));
        pollUntil(() -> initiatorEvents.ended() == 2, initiator, target);

        assertThat(initiatorEvents.failed.get(1L)).isInstanceOf(RemoteAccessException.class);
        assertThat(initiatorEvents.completed).containsOnlyKeys(2L);
        assertThat(targetEvents.imms).containsExactly(2);
        assertThat(destination.mismatch(source)).isEqualTo(-1);
    }

    @Test
    void freeTheStagingChunksWhenTheLastDeviceRegionIsDeregistered() {
        final long before = HostBackedDeviceMemory.LIVE_STAGING.get();
        final long first = target.register(arena.allocate(4096), Device.cuda(0));
        final long second = target.register(arena.allocate(4096), Device.cuda(0));
        assertThat(HostBackedDeviceMemory.LIVE_STAGING.get()).isEqualTo(before + 8);

        target.deregister(first);
        assertThat(HostBackedDeviceMemory.LIVE_STAGING.get()).isEqualTo(before + 8);
        target.deregister(second);

        assertThat(HostBackedDeviceMemory.LIVE_STAGING.get()).isEqualTo(before);
    }

    @Test
    void rejectInvalidStagingOptions() {
        assertThat(new TcpTransport().unavailabilityCause(TcpDomains.config(0, Map.of(TcpStaging.CHUNKS_OPTION, "1"))))
                .contains("tcp.stagingChunks must be >= 2");
        assertThat(new TcpTransport()
                        .unavailabilityCause(TcpDomains.config(0, Map.of(TcpStaging.CHUNK_BYTES_OPTION, "4MiB"))))
                .contains("whole numbers");
    }

    private boolean pollBoth(final int times) {
        for (int i = 0; i < times; i++) {
            initiator.poll();
            target.poll();
        }
        return true;
    }

    private MemorySegment pattern(final int size, final int seed) {
        final MemorySegment segment = arena.allocate(size);
        for (int i = 0; i < size; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
        return segment;
    }
}
