package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.EngineCounter;
import dev.transferengine.GroupSpec;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.cuda.HostBackedDeviceMemory;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.spi.DeviceMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

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

    private final Arena arena = Arena.ofShared();
    private final MemorySegment target = arena.allocate(SIZE, 4096);

    @AfterEach
    void close() {
        HostBackedDeviceMemory.ALLOCATIONS.remove(target.address());
        arena.close();
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

    private static TransferEngine engine() {
        return TransferEngine.builder()
                .group(GroupSpec.of(1).withCudaDevice(0))
                .option(DeviceMemory.OPTION, HostBackedDeviceMemory.NAME)
                .build();
    }
}
