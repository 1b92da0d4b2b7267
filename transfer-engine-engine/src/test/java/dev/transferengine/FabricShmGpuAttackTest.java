package dev.transferengine;

import dev.transferengine.core.Engines;
import dev.transferengine.cuda.GpuMemory;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;
import dev.transferengine.test.Checksums;
import dev.transferengine.test.PeerProcesses;
import dev.transferengine.transport.fabric.FabricTestAccess;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The GPU path on libfabric (FI_HMEM, shm's CUDA IPC) attacked by a writer holding a descriptor (issue 16, the GPU
 * rows of docs/security.md): out-of-bounds writes and reads checked against guard bytes on both sides of the peer's
 * GPU region (one device allocation, {@code guard=} of {@link PeerProcesses}), GPU memory the peer's application frees
 * while it is registered, and a stale key of GPU memory registered again. Runs where a GPU and a libfabric with FI_HMEM
 * on shm are (as {@link FabricShmGpuTest}); skips elsewhere with the reason.
 */
class FabricShmGpuAttackTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int SIZE = 8 << 20;
    private static final int GUARD = 64 << 10;

    private final AtomicLong manualTime = new AtomicLong();
    private final List<AutoCloseable> resources = new ArrayList<>();
    private Arena arena;
    private MemorySegment expected;
    private TransferEngine sender;
    private MemoryRegion source;

    @BeforeEach
    @SuppressWarnings("MustBeClosedChecker") // the arena lives for the test; close() closes it
    void openSender() {
        assumeTrue(GpuMemory.isAvailable(), () -> "needs an NVIDIA GPU: " + GpuMemory.unavailabilityCause());
        FabricTestAccess.assumeAvailable("shm");
        final String hmem = FabricTestAccess.hmemUnavailabilityCause("shm");
        assumeTrue(
                hmem == null,
                () -> "needs libfabric's shm provider with FI_HMEM (libfabric >= 1.18 built --with-cuda, see"
                        + " .ci/gpu/libfabric-cuda.sh): " + hmem);
        arena = Arena.ofShared();
        expected = arena.allocate(SIZE, 4096);
        for (int i = 0; i < SIZE; i += Long.BYTES) {
            expected.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L + 3);
        }
        final GpuMemory gpu = GpuMemory.allocate(0, SIZE);
        resources.add(gpu);
        gpu.copyFromHost(expected);
        final TransferEngineBuilder builder = FabricTestAccess.withLibrary(TransferEngine.builder()
                .transport("fabric")
                .group(GroupSpec.of(1).withCudaDevice(0))
                .option("fabric.provider", "shm")
                .option("fabric.hmem", "true")
                .operationTimeout(Duration.ofSeconds(20))
                .drainTimeout(Duration.ofSeconds(2)));
        sender = Engines.open(builder.config(), TransferCounters.UPDATER, manualTime::get);
        source = sender.register(gpu.segment(), Device.cuda(0));
    }

    @AfterEach
    void close() throws Exception {
        if (sender != null) {
            sender.close();
        }
        for (final AutoCloseable resource : resources.reversed()) {
            resource.close();
        }
        if (arena != null) {
            arena.close();
        }
    }

    @Test
    void outOfBoundsHmemWritesAndReadsAreRefusedAndNoGuardByteOfEitherGpuChanges() throws Exception {
        final PeerProcesses peer = gpuPeer("guard=" + GUARD);
        final RegionDescriptor real = peer.descriptor();
        final MemorySegment image = arena.allocate(GUARD + SIZE + GUARD, 4096);
        image.asSlice(0, GUARD).fill((byte) 0xA5);
        image.asSlice(GUARD + SIZE, GUARD).fill((byte) 0xA5);
        final GpuMemory local = GpuMemory.allocate(0, image.byteSize());
        resources.add(local);
        local.copyFromHost(image);
        final MemoryRegion readInto = sender.register(local.segment().asSlice(GUARD, SIZE), Device.cuda(0));

        // descriptors lying about the length get past the local checks; the peer's provider must refuse
        final RegionDescriptor longer = new RegionDescriptor(real.address(), 2L * SIZE, real.nics());
        final RegionDescriptor endless = new RegionDescriptor(real.address(), Long.MAX_VALUE, real.nics());
        assertRefused(sender.submit(
                SingleWrite.of(source, 0, 1 << 20, longer, SIZE - 4096).withImm(3)));
        assertRefused(
                sender.submit(SingleWrite.of(source, 0, 4096, longer, SIZE).withImm(3)));
        assertRefused(sender.submit(
                SingleWrite.of(source, 0, 4096, endless, Long.MAX_VALUE - 4096).withImm(3)));
        assertRefused(sender.submit(SingleRead.of(longer, SIZE - 4096, 1 << 20, readInto, 0)));

        final String zeros = Long.toString(Checksums.crc32c(arena.allocate(SIZE, 4096)));
        assertThat(crc(peer)).as("the peer's region").isEqualTo(zeros);
        assertThat(guards(peer)).as("the peer's guards").isTrue();
        final MemorySegment now = arena.allocate(image.byteSize(), 4096);
        local.copyToHost(now);
        assertThat(now.mismatch(image))
                .as("the refused read's destination and its guards")
                .isEqualTo(-1L);

        // aimed before the region: refused where the address counts (FI_MR_VIRT_ADDR), at offset 0 inside it where
        // the provider addresses by offset (shm's FI_HMEM); never in the guard before it
        final RegionDescriptor before = new RegionDescriptor(real.address() - GUARD, SIZE + 2L * GUARD, real.nics());
        final CompletableFuture<Void> aimedBefore = sender.submit(SingleWrite.of(source, 0, 4096, before, 0));
        await().atMost(WAIT)
                .until(() -> manualTime.addAndGet(Duration.ofDays(1).toNanos()) != 0 && aimedBefore.isDone());
        if (aimedBefore.isCompletedExceptionally()) {
            assertThatThrownBy(aimedBefore::join)
                    .cause()
                    .isInstanceOfAny(RemoteAccessException.class, TransferTimeoutException.class);
        }
        final MemorySegment atStart = arena.allocate(SIZE, 4096);
        MemorySegment.copy(expected, 0, atStart, 0, 4096);
        assertThat(crc(peer)).isIn(zeros, Long.toString(Checksums.crc32c(atStart)));
        assertThat(guards(peer)).as("the guard before the region").isTrue();
        System.out.printf(
                "FabricShmGpuAttackTest write aimed %d B before the region: %s%n",
                GUARD, aimedBefore.isCompletedExceptionally() ? "refused" : "landed at offset 0 of the region");

        done(sender.submit(SingleWrite.of(source, 0, SIZE, real, 0).withImm(4)));
        peer.ask("AWAIT 4 1", "COUNTED");
        assertThat(crc(peer))
                .as("a whole write lands in the region")
                .isEqualTo(Long.toString(Checksums.crc32c(expected)));
        assertThat(guards(peer)).isTrue();
    }

    @Test
    void gpuMemoryThePeerFreesWhileRegisteredIsDeregisteredAndLaterWritesAreRefused() throws Exception {
        final PeerProcesses peer = gpuPeer();
        done(sender.submit(SingleWrite.of(source, 0, SIZE, peer.descriptor(), 0).withImm(5)));
        peer.ask("AWAIT 5 1", "COUNTED");

        final String[] freed = peer.ask("FREE", "FREED"); // its application frees the memory, never deregisters
        assertThat(freed[1]).as("deregistered by the engine").isEqualTo("true");
        assertThat(freed[2]).as("regions freed").isEqualTo("1");

        assertRefused(sender.submit(
                SingleWrite.of(source, 0, SIZE, peer.descriptor(), 0).withImm(6)));
        assertRefused(sender.submit(SingleRead.of(peer.descriptor(), 0, 4096, source, 0)));
        assertThat(peer.ask("HEALTH", "HEALTH")[1]).as("the peer lives").isEqualTo("true");
    }

    @Test
    void aStaleKeyOfGpuMemoryThePeerRegisteredAgainIsRefusedAndTheFreshOneWrites() throws Exception {
        final PeerProcesses peer = gpuPeer("guard=" + GUARD);
        final RegionDescriptor stale = peer.descriptor();
        final RegionDescriptor fresh = RegionDescriptor.parse(peer.ask("REREGISTER", "REGISTERED")[1]);

        assertRefused(sender.submit(SingleWrite.of(source, 0, SIZE, stale, 0).withImm(7)));
        assertThat(crc(peer)).isEqualTo(Long.toString(Checksums.crc32c(arena.allocate(SIZE, 4096))));
        assertThat(guards(peer)).isTrue();

        done(sender.submit(SingleWrite.of(source, 0, SIZE, fresh, 0).withImm(8)));
        peer.ask("AWAIT 8 1", "COUNTED");
        assertThat(crc(peer)).isEqualTo(Long.toString(Checksums.crc32c(expected)));
        assertThat(guards(peer)).isTrue();
    }

    /** A peer process whose region of {@link #SIZE} zeroed bytes is on its GPU 0, registered with FI_HMEM. */
    private PeerProcesses gpuPeer(final String... options) throws IOException {
        final List<String> args = new ArrayList<>(List.of(
                "fabric", "1", Integer.toString(SIZE), "fabric.provider=shm", "fabric.hmem=true", "device=cuda:0"));
        args.addAll(List.of(options));
        args.addAll(FabricTestAccess.libraryOptions());
        final PeerProcesses peer = PeerProcesses.start(args.toArray(String[]::new));
        resources.add(peer);
        return peer;
    }

    private static String crc(final PeerProcesses peer) throws IOException {
        return peer.ask("CRC", "CRC")[1];
    }

    private static boolean guards(final PeerProcesses peer) throws IOException {
        return Boolean.parseBoolean(peer.ask("GUARDS", "GUARDS")[1]);
    }

    /**
     * A request the target refuses fails, with a remote access error or (where the provider reports nothing back)
     * by the operation timeout: moves the manual clock past every deadline until it ended.
     */
    private void assertRefused(final CompletableFuture<Void> future) {
        await().atMost(WAIT).until(() -> manualTime.addAndGet(Duration.ofDays(1).toNanos()) != 0 && future.isDone());
        assertThat(future).isCompletedExceptionally();
        assertThatThrownBy(future::join)
                .cause()
                .isInstanceOfAny(RemoteAccessException.class, TransferTimeoutException.class);
    }

    private static void done(final CompletableFuture<Void> future) throws Exception {
        try {
            future.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (final ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(TransferEngineException.class);
            throw new AssertionError("transfer failed", e.getCause());
        }
    }
}
