package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.EngineCounter;
import dev.transferengine.GroupSpec;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleRead;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.cuda.HostBackedDeviceMemory;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferTimeoutException;
import dev.transferengine.spi.DeviceMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The scope sweep watches a device region's allocation through its device memory provider: a region whose address
 * the provider no longer places in the allocation it had at registration (freed, or freed and allocated again) is
 * deregistered, counted and refused. The host-backed provider plays the driver's answers, per address.
 */
class DeviceRegionSweepTest {

    private static final Duration WAIT = Duration.ofMinutes(1);
    private static final int SIZE = 64 << 10;
    private static final long REGISTERED_ID = 41;
    private static final int CHUNK = 4096;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment target = arena.allocate(SIZE, 4096);

    @AfterEach
    void close() {
        HostBackedDeviceMemory.forgetLoss();
        HostBackedDeviceMemory.FAIL_COPIES.set(false);
        HostBackedDeviceMemory.ALLOCATIONS.remove(target.address());
        arena.close();
    }

    /**
     * The tcp staging checks the allocation right before each chunk's copy: a write landing when the memory is
     * freed stops at the next chunk, is refused as for a deregistered region and counted like the sweep's.
     */
    @Test
    void aWriteLandingWhileItsAllocationIsLostStopsBeforeTheNextChunk() throws Exception {
        HostBackedDeviceMemory.ALLOCATIONS.put(target.address(), REGISTERED_ID);
        try (TransferEngine sender = engine();
                TransferEngine receiver = stagingInSmallChunks()) {
            final MemorySegment bytes = arena.allocate(SIZE).fill((byte) 7);
            final MemoryRegion source = sender.register(bytes, Device.host());
            final MemoryRegion region = receiver.register(target, Device.cuda(0));
            // the application frees the memory just after the third chunk's copy was enqueued
            HostBackedDeviceMemory.loseAfterCopies(target.address(), 3, REGISTERED_ID + 1);

            assertThatThrownBy(() -> sender.submit(SingleWrite.of(source, 0, SIZE, region.descriptor(), 0))
                            .get(1, TimeUnit.MINUTES))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOfSatisfying(RemoteAccessException.class, refused -> assertThat(refused.reason())
                            .isEqualTo(RemoteAccessException.Reason.REGION_DEREGISTERED));
            final long landed = 3L * CHUNK;
            assertThat(target.asSlice(0, landed).mismatch(bytes.asSlice(0, landed)))
                    .as("the chunks copied while allocated landed")
                    .isEqualTo(-1);
            assertThat(target.asSlice(landed).mismatch(arena.allocate(SIZE - landed)))
                    .as("no chunk was copied after the loss")
                    .isEqualTo(-1);
            await().atMost(WAIT).until(() -> !region.isRegistered());
            assertThat(receiver.metrics().counter(EngineCounter.REGIONS_FREED)).isEqualTo(1);
            assertThat(receiver.isHealthy()).isTrue();
        }
    }

    /**
     * A served read stops before the chunk it would copy out of memory lost meanwhile (no other allocation leaks),
     * and tells the reader (READ_FAILED): the read fails at once, long before its deadline, naming the peer, the
     * bytes in place and why; the destination holds what landed before, the rest untouched.
     */
    @ParameterizedTest(name = "into {0} memory")
    @ValueSource(strings = {"host", "device"})
    void aReadServedWhileItsAllocationIsLostFailsAtTheReaderNamingWhy(final String destination) {
        HostBackedDeviceMemory.ALLOCATIONS.put(target.address(), REGISTERED_ID);
        target.fill((byte) 0x3C);
        try (TransferEngine reader = reader(Duration.ofMinutes(1), true);
                TransferEngine owner = stagingInSmallChunks()) {
            final MemorySegment into = arena.allocate(SIZE, 4096);
            final MemoryRegion local =
                    reader.register(into, destination.equals("host") ? Device.host() : Device.cuda(0));
            final MemoryRegion region = owner.register(target, Device.cuda(0));
            HostBackedDeviceMemory.loseAfterCopies(target.address(), 2, DeviceMemory.NO_ALLOCATION);

            assertThatThrownBy(() -> reader.submit(SingleRead.of(region.descriptor(), 0, SIZE, local, 0))
                            .get(2, TimeUnit.MINUTES))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOfSatisfying(RemoteAccessException.class, failed -> assertThat(failed.reason())
                            .isEqualTo(RemoteAccessException.Reason.REGION_DEREGISTERED))
                    .hasMessageContaining("peer " + owner.mainAddress().describe())
                    .hasMessageMatching("(?s).*stopped serving the read of " + SIZE + " bytes .* after \\d+ of them: "
                            + "its memory was freed or its region deregistered; those \\d+ bytes are in place.*");
            assertNothingCopiedAfterTheLoss(into);
            await().atMost(WAIT).until(() -> !region.isRegistered());
            assertThat(owner.metrics().counter(EngineCounter.REGIONS_FREED)).isEqualTo(1);
        }
    }

    /** A reader that does not announce READ_FAILED (tcp.readFailures=false) is told nothing: its read times out. */
    @Test
    void aReaderWithoutReadFailuresWaitsForItsDeadlineAsBefore() {
        HostBackedDeviceMemory.ALLOCATIONS.put(target.address(), REGISTERED_ID);
        target.fill((byte) 0x3C);
        try (TransferEngine reader = reader(Duration.ofSeconds(3), false);
                TransferEngine owner = stagingInSmallChunks()) {
            final MemorySegment into = arena.allocate(SIZE);
            final MemoryRegion local = reader.register(into, Device.host());
            final MemoryRegion region = owner.register(target, Device.cuda(0));
            HostBackedDeviceMemory.loseAfterCopies(target.address(), 2, DeviceMemory.NO_ALLOCATION);

            assertThatThrownBy(() -> reader.submit(SingleRead.of(region.descriptor(), 0, SIZE, local, 0))
                            .get(1, TimeUnit.MINUTES))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(TransferTimeoutException.class); // its bytes stopped coming, so it timed out
            assertNothingCopiedAfterTheLoss(into);
        }
    }

    /** A copy off the owner's device that fails ends the served read at the reader too, with its own reason. */
    @Test
    void aReadWhoseCopyOffTheOwnersDeviceFailsFailsAtTheReader() {
        try (TransferEngine reader = reader(Duration.ofMinutes(1), true);
                TransferEngine owner = stagingInSmallChunks()) {
            final MemorySegment into = arena.allocate(SIZE);
            final MemoryRegion local = reader.register(into, Device.host());
            final MemoryRegion region = owner.register(target.fill((byte) 0x3C), Device.cuda(0));
            HostBackedDeviceMemory.FAIL_COPIES.set(true);

            assertThatThrownBy(() -> reader.submit(SingleRead.of(region.descriptor(), 0, SIZE, local, 0))
                            .get(2, TimeUnit.MINUTES))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOfSatisfying(RemoteAccessException.class, failed -> assertThat(failed.reason())
                            .isEqualTo(RemoteAccessException.Reason.SOURCE_FAILED))
                    .hasMessageContaining("after 0 of them: a copy of the bytes off its device failed");
            HostBackedDeviceMemory.FAIL_COPIES.set(false);
            assertThat(into.mismatch(arena.allocate(SIZE))).as("nothing landed").isEqualTo(-1);
        }
    }

    /** The loss comes after the second chunk's copy: nothing copied after it reached the reader. */
    private static void assertNothingCopiedAfterTheLoss(final MemorySegment into) {
        final long sent = 2L * CHUNK;
        assertThat(into.asSlice(sent).mismatch(MemorySegment.ofArray(new byte[(int) (SIZE - sent)])))
                .as("nothing copied after the loss reached the reader")
                .isEqualTo(-1);
    }

    /** Engine-allocated device memory comes from the provider and goes back to it once deregistered and drained. */
    @Test
    void allocatedDeviceMemoryIsFreedThroughTheProviderOnDeregister() throws Exception {
        try (TransferEngine sender = engine();
                TransferEngine receiver = stagingInSmallChunks()) {
            final MemorySegment bytes = arena.allocate(SIZE).fill((byte) 7);
            final MemoryRegion source = sender.register(bytes, Device.host());
            final MemoryRegion region = receiver.allocate(Device.cuda(0), SIZE);
            final long address = region.segment().address();
            assertThat(HostBackedDeviceMemory.ALLOCATED).containsKey(address);

            sender.submit(SingleWrite.of(source, 0, SIZE, region.descriptor(), 0))
                    .get(1, TimeUnit.MINUTES);
            receiver.deregister(region);

            assertThat(HostBackedDeviceMemory.ALLOCATED).doesNotContainKey(address);
            assertThat(receiver.metrics().counter(EngineCounter.REGIONS_FREED))
                    .as("freed by the engine, not while registered")
                    .isZero();
        }
    }

    @Test
    void allocatedDeviceMemoryStillRegisteredIsFreedWhenTheEngineCloses() {
        final long address;
        try (TransferEngine engine = engine()) {
            address = engine.allocate(Device.cuda(0), SIZE).segment().address();
            assertThat(HostBackedDeviceMemory.ALLOCATED).containsKey(address);
        }
        assertThat(HostBackedDeviceMemory.ALLOCATED).doesNotContainKey(address);
    }

    @Test
    void aDeviceRegionWhoseAllocationWasFreedIsDeregisteredCountedAndRefused() throws Exception {
        deregisteredOnceTheProviderAnswers(DeviceMemory.NO_ALLOCATION);
    }

    @Test
    void aDeviceRegionWhoseAddressANewAllocationHoldsIsDeregisteredCountedAndRefused() throws Exception {
        deregisteredOnceTheProviderAnswers(REGISTERED_ID + 1);
    }

    @Test
    void deviceMemoryNoAllocationHoldsIsRefusedAtRegistration() {
        HostBackedDeviceMemory.ALLOCATIONS.put(target.address(), DeviceMemory.NO_ALLOCATION);
        try (TransferEngine engine = engine()) {
            assertThatThrownBy(() -> engine.register(target, Device.cuda(0)))
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("0x" + Long.toHexString(target.address()))
                    .hasMessageContaining("cuda:0")
                    .hasMessageContaining("knows no allocation");
            assertThat(engine.regions()).isEmpty();
        }
    }

    private void deregisteredOnceTheProviderAnswers(final long answer) throws Exception {
        HostBackedDeviceMemory.ALLOCATIONS.put(target.address(), REGISTERED_ID);
        try (TransferEngine sender = engine();
                TransferEngine receiver = engine()) {
            final MemorySegment bytes = arena.allocate(SIZE).fill((byte) 7);
            final MemoryRegion source = sender.register(bytes, Device.cuda(0));
            final MemoryRegion region = receiver.register(target, Device.cuda(0));
            sender.submit(SingleWrite.of(source, 0, SIZE, region.descriptor(), 0))
                    .get(1, TimeUnit.MINUTES);
            assertThat(target.mismatch(bytes))
                    .as("the write while allocated lands")
                    .isEqualTo(-1);
            final RegionDescriptor stale = region.descriptor();

            HostBackedDeviceMemory.ALLOCATIONS.put(target.address(), answer); // the application freed the memory
            await().atMost(WAIT).until(() -> !region.isRegistered());
            assertThat(receiver.regions()).doesNotContain(region);
            assertThat(receiver.metrics().counter(EngineCounter.REGIONS_FREED)).isEqualTo(1);

            target.fill((byte) 0x3C); // what the next owner of the address put there
            bytes.fill((byte) 9);
            assertThatThrownBy(() -> sender.submit(SingleWrite.of(source, 0, SIZE, stale, 0))
                            .get(1, TimeUnit.MINUTES))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOfSatisfying(RemoteAccessException.class, refused -> assertThat(refused.reason())
                            .isIn(
                                    RemoteAccessException.Reason.UNKNOWN_KEY,
                                    RemoteAccessException.Reason.REGION_DEREGISTERED));
            assertThat(target.mismatch(arena.allocate(SIZE).fill((byte) 0x3C)))
                    .as("nothing landed at the address")
                    .isEqualTo(-1);
            receiver.deregister(region); // the application's late deregister changes nothing
            assertThat(receiver.metrics().counter(EngineCounter.REGIONS_FREED)).isEqualTo(1);
            assertThat(receiver.isHealthy()).isTrue();
        }
    }

    /**
     * While a device allocation is watched, the sweep runs before every poll rather than every millisecond of the
     * engine's clock: a fabric provider copies peers' writes into device memory while the worker polls, with no check
     * of its own. This engine's clock stands still, so only that sweep can find the loss.
     */
    @Test
    void aWatchedDeviceRegionIsSweptBeforeEveryPollNotOnTheEnginesClock() throws Exception {
        HostBackedDeviceMemory.ALLOCATIONS.put(target.address(), REGISTERED_ID);
        try (TransferEngine engine = TransferEngine.builder()
                .group(GroupSpec.of(1).withCudaDevice(0))
                .option(DeviceMemory.OPTION, HostBackedDeviceMemory.NAME)
                .clock(() -> 0L)
                .build()) {
            final MemoryRegion region = engine.register(target, Device.cuda(0));
            final MemoryRegion source = engine.register(arena.allocate(SIZE).fill((byte) 7), Device.host());
            engine.submit(SingleWrite.of(source, 0, SIZE, region.descriptor(), 0))
                    .get(1, TimeUnit.MINUTES);
            // the worker has swept since (the write took many cycles), so the clock's sweep is spent

            HostBackedDeviceMemory.ALLOCATIONS.put(target.address(), DeviceMemory.NO_ALLOCATION);
            await().atMost(WAIT).until(() -> !region.isRegistered());
            assertThat(engine.metrics().counter(EngineCounter.REGIONS_FREED)).isEqualTo(1);
        }
    }

    /**
     * A staged copy into the device that fails (the driver lost the context: seen on the H200 when memory was freed
     * under a queued copy) fails the receiving NIC once, naming it, and the write into that device ends.
     */
    @Test
    void aFailedCopyIntoTheDeviceFailsTheNicOnceAndTheWriteEnds() throws Exception {
        try (TransferEngine sender = engine();
                TransferEngine receiver = stagingInSmallChunks()) {
            final MemoryRegion source = sender.register(arena.allocate(SIZE).fill((byte) 7), Device.host());
            final MemoryRegion region = receiver.register(target, Device.cuda(0));
            HostBackedDeviceMemory.FAIL_COPIES.set(true);

            assertThatThrownBy(() -> sender.submit(SingleWrite.of(source, 0, SIZE, region.descriptor(), 0))
                            .get(2, TimeUnit.MINUTES))
                    .isInstanceOf(ExecutionException.class);
            await().atMost(WAIT).until(() -> !receiver.isHealthy());
            assertThat(receiver.nics())
                    .anySatisfy(nic -> assertThat(nic.failure()).contains("a staged copy into the device failed"));
        }
    }

    /** An engine whose tcp staging copies in chunks of {@value #CHUNK} bytes, so a write takes several. */
    private static TransferEngine stagingInSmallChunks() {
        return TransferEngine.builder()
                .group(GroupSpec.of(1).withCudaDevice(0))
                .option(DeviceMemory.OPTION, HostBackedDeviceMemory.NAME)
                .option("tcp.stagingChunkBytes", "" + CHUNK)
                .option("tcp.stagingChunks", "2")
                .build();
    }

    /** A reader whose operations end at {@code timeout}; {@code readFailures}: whether it announces READ_FAILED. */
    private static TransferEngine reader(final Duration timeout, final boolean readFailures) {
        return TransferEngine.builder()
                .group(GroupSpec.of(1).withCudaDevice(0))
                .option(DeviceMemory.OPTION, HostBackedDeviceMemory.NAME)
                .option("tcp.readFailures", Boolean.toString(readFailures))
                .operationTimeout(timeout)
                .build();
    }

    private static TransferEngine engine() {
        return TransferEngine.builder()
                .group(GroupSpec.of(1).withCudaDevice(0))
                .option(DeviceMemory.OPTION, HostBackedDeviceMemory.NAME)
                .build();
    }
}
