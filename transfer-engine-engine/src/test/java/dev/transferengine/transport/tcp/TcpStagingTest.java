package dev.transferengine.transport.tcp;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.transferengine.Device;
import dev.transferengine.DeviceUnavailableException;
import dev.transferengine.cuda.HostBackedDeviceMemory;
import dev.transferengine.spi.DeviceMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Device memory staged through pinned mirrors, with a host-backed device memory whose copies run only when polled
 * (and not at all while held), so the deferred paths are exercised deterministically.
 */
class TcpStagingTest {

    private static final Map<String, String> HOST_TEST = Map.of(DeviceMemory.OPTION, HostBackedDeviceMemory.NAME);

    private final Arena arena = Arena.ofShared();
    private final RecordingListener initiatorEvents = new RecordingListener();
    private final RecordingListener targetEvents = new RecordingListener();
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

    @AfterEach
    void close() {
        HostBackedDeviceMemory.HOLD.set(false);
        initiator.close();
        target.close();
        arena.close();
    }

    @Test
    void shouldMoveBytesFromDeviceToDeviceThroughBothMirrors() {
        final MemorySegment source = pattern(300_000, 3);
        final long sourceKey = initiator.register(source, Device.cuda(0));
        final MemorySegment destination = arena.allocate(400_000);
        final long rkey = target.register(destination, Device.cuda(0));
        final long peer = initiator.resolve(target.address());

        initiator.write(1, source, 1000, sourceKey, 250_000, peer, destination.address(), 5000, rkey, true, 42);
        pollUntil(() -> initiatorEvents.writesEnded() == 1, initiator, target);

        assertThat(initiatorEvents.writesDone).containsEntry(1L, 250_000L);
        assertThat(destination.asSlice(5000, 250_000).mismatch(source.asSlice(1000, 250_000))).isEqualTo(-1);
        assertThat(targetEvents.imms).containsExactly(42);
        assertThat(HostBackedDeviceMemory.COPIES_TO_HOST.get()).isEqualTo(1);
        assertThat(HostBackedDeviceMemory.COPIES_TO_DEVICE.get()).isEqualTo(1);
    }

    @Test
    void shouldReportAndAcknowledgeOnlyOnceThePayloadReachedTheDevice() {
        final MemorySegment source = pattern(10_000, 5);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment destination = arena.allocate(10_000);
        final long rkey = target.register(destination, Device.cuda(0));
        final long peer = initiator.resolve(target.address());
        HostBackedDeviceMemory.HOLD.set(true);

        initiator.write(1, source, 0, sourceKey, 10_000, peer, destination.address(), 0, rkey, true, 7);
        pollUntil(() -> targetEvents.bytesReceived == 0 && pollBoth(200), initiator, target);

        assertThat(targetEvents.imms).isEmpty();
        assertThat(initiatorEvents.writesEnded()).isZero();
        assertThat(destination.get(ValueLayout.JAVA_BYTE, 0)).isZero();

        HostBackedDeviceMemory.HOLD.set(false);
        pollUntil(() -> initiatorEvents.writesEnded() == 1, initiator, target);

        assertThat(targetEvents.imms).containsExactly(7);
        assertThat(destination.mismatch(source)).isEqualTo(-1);
    }

    @Test
    void shouldKeepAnswersInRequestOrderBehindAStagedPayload() {
        final MemorySegment source = pattern(8192, 9);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment onDevice = arena.allocate(8192);
        final long deviceKey = target.register(onDevice, Device.cuda(0));
        final MemorySegment onHost = arena.allocate(8192);
        final long hostKey = target.register(onHost, Device.host());
        final long peer = initiator.resolve(target.address());
        HostBackedDeviceMemory.HOLD.set(true);

        initiator.write(1, source, 0, sourceKey, 8192, peer, onDevice.address(), 0, deviceKey, true, 1);
        initiator.write(2, source, 0, sourceKey, 8192, peer, onHost.address(), 0, hostKey, true, 2);
        pollBoth(500);

        assertThat(initiatorEvents.writesEnded()).isZero();
        HostBackedDeviceMemory.HOLD.set(false);
        pollUntil(() -> initiatorEvents.writesEnded() == 2, initiator, target);

        assertThat(initiatorEvents.writesDone).containsOnlyKeys(1L, 2L);
        assertThat(targetEvents.imms).containsExactly(1, 2);
        assertThat(onDevice.mismatch(source)).isEqualTo(-1);
        assertThat(onHost.mismatch(source)).isEqualTo(-1);
    }

    @Test
    void shouldWaitForStreamCapacityWhenMoreCopiesArePendingThanItTakes() {
        final int writes = HostBackedDeviceMemory.CAPACITY * 5;
        final MemorySegment source = pattern(writes * 4096, 11);
        final long sourceKey = initiator.register(source, Device.cuda(0));
        final MemorySegment destination = arena.allocate(writes * 4096);
        final long rkey = target.register(destination, Device.cuda(0));
        final long peer = initiator.resolve(target.address());

        for (int i = 0; i < writes; i++) {
            initiator.write(i, source, i * 4096L, sourceKey, 4096, peer, destination.address(), i * 4096L, rkey,
                true, i);
        }
        pollUntil(() -> initiatorEvents.writesEnded() == writes, initiator, target);

        assertThat(initiatorEvents.writesFailed).isEmpty();
        assertThat(destination.mismatch(source)).isEqualTo(-1);
        assertThat(targetEvents.imms).hasSize(writes);
    }

    @Test
    void shouldFailStagedWritesWithTheDomainWhenItClosesBeforeTheCopyFinished() {
        final MemorySegment source = pattern(4096, 13);
        final long sourceKey = initiator.register(source, Device.cuda(0));
        final long rkey = target.register(arena.allocate(4096), Device.host());
        final long peer = initiator.resolve(target.address());
        HostBackedDeviceMemory.HOLD.set(true);

        initiator.write(5, source, 0, sourceKey, 4096, peer, 0, 0, rkey, false, 0);
        initiator.close();

        assertThat(initiatorEvents.writesFailed).containsOnlyKeys(5L);
    }

    @Test
    void shouldRefuseDeviceMemoryNamingTheMissingProvider() {
        final TcpDomain domain = TcpDomains.open(new RecordingListener(), 0, 1,
            Map.of(DeviceMemory.OPTION, "absent-memory"));
        try {
            assertThatThrownBy(() -> domain.register(arena.allocate(64), Device.cuda(0)))
                .isInstanceOf(DeviceUnavailableException.class)
                .hasMessageContaining("no device memory provider 'absent-memory'");
        } finally {
            domain.close();
        }
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
