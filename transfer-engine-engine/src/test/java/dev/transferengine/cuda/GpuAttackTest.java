package dev.transferengine.cuda;

import dev.transferengine.Device;
import dev.transferengine.EngineCounter;
import dev.transferengine.GroupSpec;
import dev.transferengine.IdleStrategyKind;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleRead;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.UvmChange;
import dev.transferengine.UvmWatcher;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.RegionBoundsException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The GPU path attacked by a peer holding a descriptor and by a careless member of the application (issue 16, the
 * GPU rows of docs/security.md): GPU regions written and read over the tcp transport, staged through pinned host
 * chunks, and UVM watchers stored into by kernels that outlive them. Every target region sits between two guard
 * areas of the same device allocation, so "no byte outside the region changed" is checked on the device. The
 * write aimed at device memory freed behind a global segment runs last: were it to break the CUDA context, only it
 * would show.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GpuAttackTest {

    private static final Duration WAIT = Duration.ofMinutes(2);
    private static final int SIZE = 4 << 20;
    private static final int GUARD = 64 << 10;
    /** Small staging chunks: a region is many pieces, and the pool (2 a direction) is far smaller than a write. */
    private static final int CHUNK = 64 << 10;

    private static final byte GUARD_BYTE = (byte) 0xA5;
    /** The attack harness's freed-tcp writes: 4 KiB each, this many in flight. */
    private static final int HAMMER_WRITE = 4096;

    private static final int HAMMER_WINDOW = 16;

    private final List<AutoCloseable> resources = new ArrayList<>();
    private CudaDevice device;
    private Arena arena;

    @BeforeEach
    @SuppressWarnings("MustBeClosedChecker") // closed in close()
    void openDevice() {
        assumeTrue(Cuda.isAvailable(), "needs an NVIDIA GPU with libcuda.so.1: " + Cuda.unavailabilityCause());
        device = CudaDevice.get(0);
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() throws Exception {
        for (final AutoCloseable resource : resources.reversed()) {
            resource.close();
        }
        if (arena != null) {
            arena.close();
        }
    }

    @Test
    void outOfBoundsStagedWritesAndReadsAreRefusedAndNoGuardByteChanges() throws Exception {
        final TransferEngine sender = track(stagingEngine(CHUNK));
        final TransferEngine receiver = track(stagingEngine(CHUNK));
        final MemorySegment expected = pattern(SIZE, 1);
        final MemoryRegion source = sender.register(gpu(expected).segment(), Device.cuda(0));
        final Guarded target = guarded();
        final RegionDescriptor real =
                receiver.register(target.region(), Device.cuda(0)).descriptor();
        final Guarded readInto = guarded();
        final MemoryRegion readRegion = sender.register(readInto.region(), Device.cuda(0));

        // the local checks: the true descriptor never lets a write leave the region
        assertThatThrownBy(() -> sender.submit(SingleWrite.of(source, 0, 4096, real, SIZE - 100)))
                .isInstanceOf(RegionBoundsException.class)
                .hasMessageContaining("destination");
        assertThatThrownBy(() -> sender.submit(SingleWrite.of(source, SIZE - 100, 4096, real, 0)))
                .isInstanceOf(RegionBoundsException.class)
                .hasMessageContaining("source");
        // a descriptor lying about the length gets past them; the receiver must refuse what leaves its region
        final RegionDescriptor longer = new RegionDescriptor(real.address(), 2L * SIZE, real.nics());
        final RegionDescriptor endless = new RegionDescriptor(real.address(), Long.MAX_VALUE, real.nics());
        assertOutOfBounds(sender.submit(SingleWrite.of(source, 0, 1 << 20, longer, SIZE - 4096)));
        assertOutOfBounds(sender.submit(SingleWrite.of(source, 0, 4096, longer, SIZE)));
        assertOutOfBounds(sender.submit(SingleWrite.of(source, 0, 4096, endless, Long.MAX_VALUE - 4096)));
        assertOutOfBounds(sender.submit(SingleRead.of(longer, SIZE - 4096, 2 * CHUNK, readRegion, 0)));
        assertOutOfBounds(sender.submit(SingleRead.of(endless, Long.MAX_VALUE - 4096, 4096, readRegion, 0)));

        assertThat(target.regionUnchanged()).as("the target region").isTrue();
        assertThat(target.guardsIntact()).as("the target's guards").isTrue();
        assertThat(readInto.regionUnchanged())
                .as("the refused reads' destination")
                .isTrue();
        assertThat(readInto.guardsIntact()).as("the refused reads' guards").isTrue();

        // Staged, a write leaves in chunk-sized pieces and the receiver checks each: a forged write that straddles
        // the end is refused at its first piece past the end, and the pieces before it stay in the region.
        assertOutOfBounds(sender.submit(SingleWrite.of(source, 0, 4 * CHUNK, longer, SIZE - 2 * CHUNK)));
        assertThat(target.guardsIntact())
                .as("the guards after a straddling write")
                .isTrue();
        System.out.printf(
                "GpuAttackTest staged straddling write: the in-bounds pieces before the end %s%n",
                target.regionUnchanged() ? "were not written" : "landed in the region");
        // the address is no part of a tcp request (offsets are): a descriptor aimed before the region stays inside it
        final RegionDescriptor before = new RegionDescriptor(real.address() - GUARD, SIZE + 2L * GUARD, real.nics());
        done(sender.submit(SingleWrite.of(source, 0, 4096, before, 0)));
        assertThat(target.guardsIntact())
                .as("the guards after a write aimed before the region")
                .isTrue();

        done(sender.submit(SingleWrite.of(source, 0, SIZE, real, 0)));
        assertThat(target.region(expected))
                .as("a whole write lands exactly in the region")
                .isTrue();
        assertThat(target.guardsIntact()).isTrue();
        assertThat(receiver.isHealthy()).isTrue();
    }

    @Test
    @SuppressWarnings("restricted") // the device pointer, scoped to an arena whose close frees it
    void aGpuRegionFreedThroughItsSegmentsScopeIsDeregisteredAndLaterWritesAreRefused() throws Exception {
        final TransferEngine sender = track(stagingEngine(CHUNK));
        final TransferEngine receiver = track(stagingEngine(CHUNK));
        final MemoryRegion source = sender.register(gpu(pattern(SIZE, 2)).segment(), Device.cuda(0));
        final DeviceBuffer freed = device.allocate(SIZE);
        freed.fill((byte) 0);
        final long address = freed.devicePointer();
        final MemoryRegion region;
        try (Arena scope = Arena.ofShared()) {
            // how an application ties GPU memory to a scope: closing the scope frees the memory (cuMemFree)
            region = receiver.register(freed.segment().reinterpret(scope, segment -> freed.close()), Device.cuda(0));
            done(sender.submit(SingleWrite.of(source, 0, SIZE, region.descriptor(), 0)));
        } // the application frees the memory but never deregisters it
        final RegionDescriptor stale = region.descriptor();

        await().atMost(WAIT).until(() -> !region.isRegistered());
        assertThat(receiver.regions()).doesNotContain(region);
        assertThat(receiver.metrics().counter(EngineCounter.REGIONS_FREED)).isEqualTo(1);

        // the next allocation of that size usually gets the freed address: a write landing there would hit it
        final DeviceBuffer next = gpuFilled(SIZE, (byte) 0x3C);
        final Throwable refused =
                failure(sender.submit(SingleWrite.of(source, 0, SIZE, stale, 0).withImm(4)));
        assertThat(refused).isInstanceOf(RemoteAccessException.class);
        assertThat(((RemoteAccessException) refused).reason())
                .isIn(RemoteAccessException.Reason.UNKNOWN_KEY, RemoteAccessException.Reason.REGION_DEREGISTERED);
        assertThat(isFilled(next, SIZE, (byte) 0x3C))
                .as("the allocation at 0x%x (the freed one was at 0x%x)", next.devicePointer(), address)
                .isTrue();
        assertThat(receiver.metrics().counter(EngineCounter.IMM_EVENTS)).isZero();
        receiver.deregister(region); // the application's late deregister changes nothing
        assertThat(receiver.isHealthy()).isTrue();
        assertContextWorks();
    }

    /**
     * A segment of the global scope ({@code MemorySegment.ofAddress(p).reinterpret(n)}, what {@link
     * DeviceBuffer#segment()} is) says nothing when the memory is freed; the driver's buffer id of the address does:
     * the sweep deregisters the region after {@code cuMemFree}, and a write aimed at it is refused, also once a new
     * allocation holds the address. Last: before the sweep watched the driver, such a write went into freed memory.
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void aGpuRegionFreedBehindAGlobalSegmentIsDeregisteredAndNothingLandsInTheNextAllocation() throws Exception {
        final TransferEngine sender = track(stagingEngine(CHUNK));
        final TransferEngine receiver = track(stagingEngine(CHUNK));
        final MemoryRegion source = sender.register(gpu(pattern(SIZE, 3)).segment(), Device.cuda(0));
        final DeviceBuffer freed = device.allocate(SIZE);
        final long address = freed.devicePointer();
        final MemoryRegion region = receiver.register(freed.segment(), Device.cuda(0));
        final RegionDescriptor stale = region.descriptor();
        final CudaDeviceMemory driver = new CudaDeviceMemory();
        final long allocated = driver.allocationId(0, address);
        freed.close(); // cuMemFree while registered, never deregistered
        System.out.printf(
                "GpuAttackTest global segment: buffer id of 0x%x %d while allocated, %d after cuMemFree%n",
                address, allocated, driver.allocationId(0, address));

        await().atMost(WAIT).until(() -> !region.isRegistered());
        assertThat(receiver.regions()).doesNotContain(region);
        assertThat(receiver.metrics().counter(EngineCounter.REGIONS_FREED)).isEqualTo(1);
        assertStale(sender.submit(SingleWrite.of(source, 0, SIZE, stale, 0).withImm(6)));
        assertThatThrownBy(() -> receiver.register(freed.segment(), Device.cuda(0)))
                .as("freed device memory cannot be registered")
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("knows no allocation");

        // the next allocation of that size usually gets the freed address: a write landing there would hit it
        final DeviceBuffer next = gpuFilled(SIZE, (byte) 0x3C);
        assertStale(sender.submit(SingleWrite.of(source, 0, SIZE, stale, 0).withImm(6)));
        System.out.printf(
                "GpuAttackTest global segment freed while registered: the next allocation got %s address%n",
                next.devicePointer() == address ? "the same" : "another");
        assertThat(isFilled(next, SIZE, (byte) 0x3C))
                .as("the allocation at 0x%x (the freed one was at 0x%x)", next.devicePointer(), address)
                .isTrue();
        assertThat(receiver.metrics().counter(EngineCounter.IMM_EVENTS)).isZero();
        receiver.deregister(region); // the application's late deregister changes nothing
        assertThat(receiver.metrics().counter(EngineCounter.REGIONS_FREED)).isEqualTo(1);
        assertThat(sender.isHealthy()).isTrue();
        assertThat(receiver.isHealthy()).isTrue();
        assertContextWorks();
    }

    /**
     * Memory the engine allocated (issue 16, item 5, closed): deregistered while a peer hammers 4 KiB writes over tcp
     * staging, it is freed only after the staged copies drained, so the next allocation at that place takes nothing.
     */
    @Test
    @Order(Integer.MAX_VALUE - 2)
    void engineAllocatedGpuMemoryDeregisteredUnderHammeringWritesLeavesTheNextAllocationZero() throws Exception {
        final TransferEngine sender = track(stagingEngine(CHUNK));
        final TransferEngine receiver = track(stagingEngine(CHUNK));
        final MemoryRegion source = sender.register(pattern(HAMMER_WRITE, 11), Device.host());
        final MemoryRegion region = receiver.allocate(Device.cuda(0), SIZE);
        final long address = region.segment().address();
        final CudaDeviceMemory driver = new CudaDeviceMemory();
        final long allocated = driver.allocationId(0, address);
        assertThat(allocated).as("a driver allocation").isPositive();
        final Hammer hammer = new Hammer(sender, source, region.descriptor());

        await().atMost(WAIT).until(() -> hammer.acked.get() >= 100);
        receiver.deregister(region); // drains the staged copies, then cuMemFree
        hammer.deregistered.set(true);
        assertThat(driver.allocationId(0, address)).as("freed by the engine").isNotEqualTo(allocated);
        final DeviceBuffer next = gpuFilled(SIZE, (byte) 0);
        await().atMost(WAIT).until(() -> hammer.refusedAfter.get() >= 100);
        hammer.stop();

        final long nonZero = nonZeroBytes(next);
        System.out.printf(
                "GpuAttackTest engine allocation deregistered under 4 KiB writes: next allocation at %s address,"
                        + " %d non-zero bytes, %d writes ACKed before, %d refused after%n",
                next.devicePointer() == address ? "the same" : "another",
                nonZero,
                hammer.acked.get(),
                hammer.refusedAfter.get());
        assertThat(nonZero).as("bytes landed in the next allocation").isZero();
        assertThat(hammer.ackedAfter.get())
                .as("writes ACKed after deregister returned")
                .isZero();
        assertThat(receiver.metrics().counter(EngineCounter.REGIONS_FREED)).isZero();
        assertThat(receiver.isHealthy()).isTrue();
        assertContextWorks();
    }

    @Test
    void aStaleKeyOfAReRegisteredOrReKeyedGpuRegionIsRefusedAndLeavesItUntouched() throws Exception {
        final TransferEngine sender = track(stagingEngine(CHUNK));
        final TransferEngine receiver = track(stagingEngine(CHUNK));
        final MemorySegment expected = pattern(SIZE, 4);
        final MemoryRegion source = sender.register(gpu(expected).segment(), Device.cuda(0));
        final Guarded target = guarded();
        final MemoryRegion first = receiver.register(target.region(), Device.cuda(0));
        final RegionDescriptor deregistered = first.descriptor();
        receiver.deregister(first);
        final MemoryRegion again = receiver.register(target.region(), Device.cuda(0));
        final RegionDescriptor beforeRekey = again.descriptor();

        assertStale(
                sender.submit(SingleWrite.of(source, 0, SIZE, deregistered, 0).withImm(5)));
        final RegionDescriptor fresh = again.rekey();
        assertStale(
                sender.submit(SingleWrite.of(source, 0, SIZE, beforeRekey, 0).withImm(5)));
        assertStale(sender.submit(SingleRead.of(deregistered, 0, SIZE, source, 0)));

        assertThat(target.regionUnchanged()).isTrue();
        assertThat(target.guardsIntact()).isTrue();
        assertThat(receiver.metrics().counter(EngineCounter.IMM_EVENTS)).isZero();
        done(sender.submit(SingleWrite.of(source, 0, SIZE, fresh, 0)));
        assertThat(target.region(expected)).as("the fresh key writes").isTrue();
        assertThat(target.guardsIntact()).isTrue();
    }

    @Test
    void concurrentStagedWritesFarBeyondTheStagingPoolBothWaysAllLandWithTheHeapBounded() throws Exception {
        final int half = 32 << 20;
        final int slice = 2 << 20;
        final TransferEngine a = track(stagingEngine(CHUNK));
        final TransferEngine b = track(stagingEngine(CHUNK));
        final MemorySegment fromA = pattern(half, 5);
        final MemorySegment fromB = pattern(half, 6);
        final MemoryRegion srcA = a.register(gpu(fromA).segment(), Device.cuda(0));
        final MemoryRegion srcB = b.register(gpu(fromB).segment(), Device.cuda(0));
        final DeviceBuffer intoA = gpuFilled(half, (byte) 0);
        final DeviceBuffer intoB = gpuFilled(half, (byte) 0);
        final MemoryRegion regionA = a.register(intoA.segment(), Device.cuda(0));
        final RegionDescriptor dstA = regionA.descriptor();
        final RegionDescriptor dstB =
                b.register(intoB.segment(), Device.cuda(0)).descriptor();
        final long heapBefore = heapAfterGc();

        final List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (int k = 0; k < half / slice; k++) { // 16 each way, each 32 pieces, through 2 chunks a direction
            writes.add(a.submit(SingleWrite.of(srcA, (long) k * slice, slice, dstB, (long) k * slice)));
            writes.add(b.submit(SingleWrite.of(srcB, (long) k * slice, slice, dstA, (long) k * slice)));
        }
        final long heapDuring = heapAfterGc();
        for (final CompletableFuture<Void> write : writes) {
            done(write);
        }
        System.out.printf(
                "GpuAttackTest staging pool of 2 x %d B a direction, %d writes of %d B at once: heap %d MB before,"
                        + " %d MB with them queued (after GC)%n",
                CHUNK, writes.size(), slice, heapBefore >> 20, heapDuring >> 20);

        assertThat(heapDuring - heapBefore)
                .as("heap growth with the writes queued")
                .isLessThan(64L << 20);
        assertThat(deviceEquals(intoB, fromA)).as("A's bytes in B").isTrue();
        assertThat(deviceEquals(intoA, fromB)).as("B's bytes in A").isTrue();
        // a read of all of B's source back into A, 512 pieces, while A writes all of its own to B again
        intoA.fill((byte) 0);
        final CompletableFuture<Void> read = a.submit(SingleRead.of(srcB.descriptor(), 0, half, regionA, 0));
        final CompletableFuture<Void> write = a.submit(SingleWrite.of(srcA, 0, half, dstB, 0));
        done(read);
        done(write);
        assertThat(deviceEquals(intoA, fromB)).isTrue();
        assertThat(deviceEquals(intoB, fromA)).isTrue();
        assertThat(a.isHealthy() && b.isHealthy()).isTrue();
    }

    @Test
    void aStagedGpuWriteOfMoreThan2GiBLandsWholeOrIsRefusedTyped() throws Exception {
        final long big = (2L << 30) + 65_536; // past every int: lengths, offsets and piece counts must be longs
        final TransferEngine sender = track(stagingEngine(4 << 20));
        final TransferEngine receiver = track(stagingEngine(4 << 20));
        final MemorySegment expected = pattern(big, 7);
        final MemoryRegion source = sender.register(gpu(expected).segment(), Device.cuda(0));
        final DeviceBuffer into = gpuFilled(big, (byte) 0);
        final RegionDescriptor target =
                receiver.register(into.segment(), Device.cuda(0)).descriptor();

        final @Nullable Throwable refused;
        try {
            refused = outcome(sender.submit(SingleWrite.of(source, 0, big, target, 0)));
        } catch (final TransferEngineException atSubmit) {
            System.out.printf("GpuAttackTest %d B staged write: refused at submit: %s%n", big, atSubmit);
            return;
        }
        System.out.printf(
                "GpuAttackTest %d B staged write: %s%n", big, refused == null ? "landed" : "refused: " + refused);
        if (refused == null) {
            assertThat(deviceEquals(into, expected))
                    .as("the bytes landed whole")
                    .isTrue();
        }
        assertThat(sender.isHealthy() && receiver.isHealthy()).isTrue();
    }

    @Test
    void aListenerThatThrowsUnderAKernelFloodReleasesOnlyItsWatcherWhileAnotherKeepsEveryChange() {
        final TransferEngine engine = track(watcherEngine());
        final WatcherKernels flood = track(WatcherKernels.load(device));
        final WatcherKernels steady = track(WatcherKernels.load(device));
        final List<UvmChange> bystander = new CopyOnWriteArrayList<>();
        final UvmWatcher calm = engine.allocUvmWatcher((o, n) -> bystander.add(new UvmChange(o, n)));
        final AtomicInteger thrown = new AtomicInteger();
        final UvmWatcher hostile = engine.allocUvmWatcher((o, n) -> {
            thrown.incrementAndGet();
            throw new IllegalStateException("a listener that throws");
        });

        flood.increment(hostile.devicePointer(), 1_000_000); // on its own stream, beside the steady stores
        for (int k = 1; k <= 50; k++) {
            steady.store(calm.devicePointer(), k);
            steady.synchronize();
            final int expected = k;
            await().atMost(WAIT).until(() -> bystander.size() >= expected);
        }
        await().atMost(WAIT).until(() -> !hostile.isOpen());
        flood.synchronize(); // throws had a store faulted

        assertThat(thrown.get()).as("calls of the throwing listener").isEqualTo(1);
        assertThat(hostile.value()).isZero();
        assertThat(bystander).hasSize(50);
        for (int k = 1; k <= 50; k++) {
            assertThat(bystander.get(k - 1)).isEqualTo(new UvmChange(k - 1, k));
        }
        assertThat(calm.isOpen()).isTrue();
        assertThat(engine.isHealthy()).isTrue();
    }

    @Test
    void aWatcherClosedWhileItsKernelStoresHearsAtMostOneMoreCallAndItsSlotStartsAtZeroForTheNext() {
        final TransferEngine engine = track(watcherEngine());
        final WatcherKernels kernels = track(WatcherKernels.load(device));
        final AtomicInteger calls = new AtomicInteger();
        final UvmWatcher careless = engine.allocUvmWatcher((o, n) -> calls.incrementAndGet() > 0);

        kernels.increment(careless.devicePointer(), 2_000_000);
        await().atMost(WAIT).until(() -> calls.get() > 0);
        careless.close(); // the kernel still stores: the documented misuse
        final int atClose = calls.get();
        kernels.synchronize(); // it ran on into the released slot, and left its last value there
        final List<UvmChange> changes = new CopyOnWriteArrayList<>();
        final UvmWatcher next = engine.allocUvmWatcher((o, n) -> changes.add(new UvmChange(o, n)));

        assertThat(next.devicePointer()).as("the slot is reused").isEqualTo(careless.devicePointer());
        assertThat(next.value()).isZero();
        kernels.store(next.devicePointer(), 7);
        kernels.synchronize();
        await().atMost(WAIT).until(() -> !changes.isEmpty());

        assertThat(changes).containsExactly(new UvmChange(0, 7));
        assertThat(calls.get()).as("calls after the close returned").isLessThanOrEqualTo(atClose + 1);
        assertThat(careless.isOpen()).isFalse();
        assertThat(careless.value()).isZero();
        assertThat(engine.isHealthy()).isTrue();
    }

    // ---- helpers ----

    /** A device allocation of {@link #GUARD} + {@link #SIZE} + {@link #GUARD}: zeroed region, guards of 0xA5. */
    private record Guarded(DeviceBuffer buffer, MemorySegment image) {

        MemorySegment region() {
            return buffer.segment().asSlice(GUARD, SIZE);
        }

        boolean regionUnchanged() {
            return region(image.asSlice(GUARD, SIZE));
        }

        boolean region(final MemorySegment expected) {
            final MemorySegment now = snapshot();
            return MemorySegment.mismatch(now, GUARD, GUARD + SIZE, expected, 0, SIZE) == -1;
        }

        boolean guardsIntact() {
            final MemorySegment now = snapshot();
            return MemorySegment.mismatch(now, 0, GUARD, image, 0, GUARD) == -1
                    && MemorySegment.mismatch(
                                    now, GUARD + SIZE, image.byteSize(), image, GUARD + SIZE, image.byteSize())
                            == -1;
        }

        private MemorySegment snapshot() {
            final MemorySegment now = Arena.ofAuto().allocate(image.byteSize());
            buffer.copyToHost(now);
            return now;
        }
    }

    /**
     * A peer writing {@value #HAMMER_WRITE} bytes at a time across a region, {@value #HAMMER_WINDOW} writes in
     * flight, on a thread of its own until {@link #stop()}; counts what was ACKed and refused before and after
     * {@link #deregistered} was set.
     */
    private static final class Hammer {
        final AtomicLong acked = new AtomicLong();
        final AtomicLong ackedAfter = new AtomicLong();
        final AtomicLong refusedAfter = new AtomicLong();
        final AtomicBoolean deregistered = new AtomicBoolean();
        private final AtomicBoolean stopped = new AtomicBoolean();
        private final Semaphore window = new Semaphore(HAMMER_WINDOW);
        private final CompletableFuture<Void> done;

        Hammer(final TransferEngine sender, final MemoryRegion source, final RegionDescriptor target) {
            done = CompletableFuture.runAsync(() -> {
                long offset = 0;
                while (!stopped.get()) {
                    take(1);
                    final boolean after = deregistered.get();
                    try {
                        final CompletableFuture<Void> _ = sender.submit(
                                        SingleWrite.of(source, 0, HAMMER_WRITE, target, offset))
                                .whenComplete((_, error) -> {
                                    if (error == null) {
                                        (after ? ackedAfter : acked).incrementAndGet();
                                    } else if (after) {
                                        refusedAfter.incrementAndGet();
                                    }
                                    window.release();
                                });
                    } catch (final TransferEngineException e) { // back-pressure: try again
                        window.release();
                    }
                    offset = (offset + HAMMER_WRITE) % SIZE;
                }
                take(HAMMER_WINDOW);
            });
        }

        /** Stops writing and waits for the writes in flight. */
        void stop() throws Exception {
            stopped.set(true);
            done.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }

        private void take(final int permits) {
            try {
                if (!window.tryAcquire(permits, WAIT.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException("writes did not end within " + WAIT);
                }
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    private long nonZeroBytes(final DeviceBuffer buffer) {
        final MemorySegment now = arena.allocate(buffer.byteSize());
        buffer.copyToHost(now);
        long nonZero = 0;
        for (long i = 0; i < now.byteSize(); i++) {
            if (now.get(ValueLayout.JAVA_BYTE, i) != 0) {
                nonZero++;
            }
        }
        return nonZero;
    }

    private Guarded guarded() {
        final MemorySegment image = arena.allocate(GUARD + SIZE + GUARD);
        image.asSlice(0, GUARD).fill(GUARD_BYTE);
        image.asSlice(GUARD + SIZE, GUARD).fill(GUARD_BYTE);
        final DeviceBuffer buffer = track(device.allocate(image.byteSize()));
        buffer.copyFromHost(image);
        return new Guarded(buffer, image);
    }

    private DeviceBuffer gpu(final MemorySegment content) {
        final DeviceBuffer buffer = track(device.allocate(content.byteSize()));
        buffer.copyFromHost(content);
        return buffer;
    }

    private DeviceBuffer gpuFilled(final long bytes, final byte value) {
        final DeviceBuffer buffer = track(device.allocate(bytes));
        buffer.fill(value);
        return buffer;
    }

    private boolean deviceEquals(final DeviceBuffer buffer, final MemorySegment expected) {
        final MemorySegment now = arena.allocate(expected.byteSize());
        buffer.copyToHost(now);
        return now.mismatch(expected) == -1;
    }

    private boolean isFilled(final DeviceBuffer buffer, final long bytes, final byte value) {
        final MemorySegment expected = arena.allocate(bytes).fill(value);
        return deviceEquals(buffer, expected);
    }

    private MemorySegment pattern(final long bytes, final long seed) {
        final MemorySegment segment = arena.allocate(bytes, 4096);
        for (long i = 0; i < bytes; i += Long.BYTES) {
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, i, (i + seed) * 0x9E3779B97F4A7C15L);
        }
        return segment;
    }

    private <T extends AutoCloseable> T track(final T resource) {
        resources.add(resource);
        return resource;
    }

    private static TransferEngine stagingEngine(final int chunkBytes) {
        return TransferEngine.builder()
                .group(GroupSpec.of(1).withCudaDevice(0))
                .option("tcp.stagingChunkBytes", Integer.toString(chunkBytes))
                .option("tcp.stagingChunks", "2")
                .operationTimeout(Duration.ofSeconds(60))
                .drainTimeout(Duration.ofSeconds(2))
                .build();
    }

    private static TransferEngine watcherEngine() {
        return TransferEngine.builder()
                .group(GroupSpec.of(1).withCudaDevice(0))
                .idleStrategy(IdleStrategyKind.SPIN)
                .build();
    }

    private static long heapAfterGc() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** A GPU fault would have broken the context: every later call would fail. */
    private void assertContextWorks() {
        final MemorySegment out = pattern(1 << 20, 8);
        final DeviceBuffer buffer = gpu(out);
        device.synchronize();
        assertThat(deviceEquals(buffer, out)).isTrue();
    }

    private static void assertOutOfBounds(final CompletableFuture<Void> future) throws Exception {
        final Throwable error = failure(future);
        assertThat(error).isInstanceOf(RemoteAccessException.class);
        assertThat(((RemoteAccessException) error).reason()).isEqualTo(RemoteAccessException.Reason.OUT_OF_BOUNDS);
    }

    private static void assertStale(final CompletableFuture<Void> future) throws Exception {
        final Throwable error = failure(future);
        assertThat(error).isInstanceOf(RemoteAccessException.class);
        assertThat(((RemoteAccessException) error).reason())
                .isIn(RemoteAccessException.Reason.UNKNOWN_KEY, RemoteAccessException.Reason.REGION_DEREGISTERED);
    }

    private static Throwable failure(final CompletableFuture<Void> future) throws Exception {
        final Throwable error = outcome(future);
        if (error == null) {
            throw new AssertionError("the request succeeded; it must be refused");
        }
        return error;
    }

    /** Null once the request is done; its typed error if it failed. Never waits past {@link #WAIT}. */
    private static @Nullable Throwable outcome(final CompletableFuture<Void> future) throws Exception {
        try {
            future.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            return null;
        } catch (final ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(TransferEngineException.class);
            return e.getCause();
        }
    }

    private static void done(final CompletableFuture<Void> future) throws Exception {
        assertThat(outcome(future)).as("the request must succeed").isNull();
    }
}
