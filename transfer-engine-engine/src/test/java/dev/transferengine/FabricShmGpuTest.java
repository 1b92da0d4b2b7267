package dev.transferengine;

import dev.transferengine.core.Engines;
import dev.transferengine.cuda.GpuMemory;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.RegionBoundsException;
import dev.transferengine.exceptions.RemoteAccessException;
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
import java.util.OptionalInt;
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
 * GPU memory straight through libfabric (FI_HMEM, GPUDirect): GPU 0 of this JVM writes into GPU 0 memory of a
 * {@link PeerProcess} over the shm provider (CUDA IPC), with imm, and reads it back; bounds, keys and deregistration
 * as for host memory.
 * Runs where a GPU and a libfabric with FI_HMEM on shm are (libfabric 2.1 built {@code --with-cuda} by
 * {@code .ci/gpu/libfabric-cuda.sh}); skips elsewhere with the reason.
 */
class FabricShmGpuTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int SIZE = 8 << 20;

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
            expected.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L + 1);
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

    /** A peer process whose region of {@link #SIZE} zeroed bytes is on its GPU 0, registered with FI_HMEM. */
    private PeerProcesses gpuPeer() throws IOException {
        final List<String> args = new ArrayList<>(List.of(
                "fabric", "1", Integer.toString(SIZE), "fabric.provider=shm", "fabric.hmem=true", "device=cuda:0"));
        args.addAll(FabricTestAccess.libraryOptions());
        final PeerProcesses peer = PeerProcesses.start(args.toArray(String[]::new));
        resources.add(peer);
        return peer;
    }

    @Test
    void registerGpuMemoryWithHmemAndSayItInTheNicDescription() {
        assertThat(sender.nics()).singleElement().satisfies(nic -> assertThat(nic.description())
                .contains("device memory: FI_HMEM GPUDirect"));
        assertThat(source.descriptor().length()).isEqualTo(SIZE);
    }

    @Test
    void writeGpuToGpuAcrossProcessesWithImm() throws Exception {
        final PeerProcesses peer = gpuPeer();

        done(sender.submit(SingleWrite.of(source, 0, SIZE, peer.descriptor(), 0).withImm(7)));

        assertThat(peer.ask("AWAIT 7 1", "COUNTED")[2]).isEqualTo("0");
        assertThat(crc(peer)).isEqualTo(Long.toString(Checksums.crc32c(expected)));
    }

    @Test
    void writePagedGpuMemoryWithAnImmPerPage() throws Exception {
        final PeerProcesses peer = gpuPeer();
        final int page = 64 << 10;
        final int[] srcPages = {0, 3, 5, 17, 100, 127};
        final int[] dstPages = {1, 2, 9, 40, 41, 126};

        done(sender.submit(new PagedWrite(
                source, 0, page, srcPages, peer.descriptor(), 0, page, dstPages, page, OptionalInt.of(8))));

        final MemorySegment want = arena.allocate(SIZE, 4096);
        for (int k = 0; k < srcPages.length; k++) {
            MemorySegment.copy(expected, (long) srcPages[k] * page, want, (long) dstPages[k] * page, page);
        }
        peer.ask("AWAIT 8 " + srcPages.length, "COUNTED");
        assertThat(crc(peer)).isEqualTo(Long.toString(Checksums.crc32c(want)));
    }

    @Test
    void scatterGpuMemoryToSeveralRangesOfAPeerWithImm() throws Exception {
        final PeerProcesses peer = gpuPeer();
        final List<ScatterTarget> targets = List.of(
                new ScatterTarget(peer.descriptor(), 1_000_001, 0, 4096),
                new ScatterTarget(peer.descriptor(), 2 << 20, 3 << 20, 5 << 20),
                new ScatterTarget(peer.descriptor(), 12_345, 7 << 20, 0));

        done(sender.submit(ScatterWrite.of(source, targets).withImm(9)));

        final MemorySegment want = arena.allocate(SIZE, 4096);
        for (final ScatterTarget target : targets) {
            MemorySegment.copy(expected, target.srcOffset(), want, target.dstOffset(), target.length());
        }
        peer.ask("AWAIT 9 " + targets.size(), "COUNTED");
        assertThat(crc(peer)).isEqualTo(Long.toString(Checksums.crc32c(want)));
    }

    @Test
    void refuseOutOfBoundsGpuWritesLocallyAndRemotelyLeavingThePeerUntouched() throws Exception {
        final PeerProcesses peer = gpuPeer();
        final RegionDescriptor real = peer.descriptor();

        assertThatThrownBy(() -> sender.submit(SingleWrite.of(source, SIZE - 100, 200, real, 0)))
                .isInstanceOf(RegionBoundsException.class)
                .hasMessageContaining("source");
        assertThatThrownBy(() -> sender.submit(SingleWrite.of(source, 0, 200, real, SIZE - 100)))
                .isInstanceOf(RegionBoundsException.class)
                .hasMessageContaining("destination");
        // a descriptor that lies about the length gets past the local check; the target's provider must refuse a write
        // that runs past the region's end (shm's FI_HMEM entry addresses by offset: FI_MR_HMEM without FI_MR_VIRT_ADDR)
        final RegionDescriptor forged = new RegionDescriptor(real.address(), 2L * SIZE, real.nics());
        assertRefused(sender.submit(
                SingleWrite.of(source, 0, 1 << 20, forged, SIZE - 4096).withImm(3)));

        assertThat(crc(peer)).isEqualTo(Long.toString(Checksums.crc32c(arena.allocate(SIZE, 4096))));
    }

    @Test
    void refuseAStaleKeyAfterThePeerDeregisteredItsGpuRegion() throws Exception {
        final PeerProcesses peer = gpuPeer();
        peer.ask("DEREGISTER", "DEREGISTERED");

        assertRefused(sender.submit(
                SingleWrite.of(source, 0, 1 << 20, peer.descriptor(), 0).withImm(4)));

        assertThat(crc(peer)).isEqualTo(Long.toString(Checksums.crc32c(arena.allocate(SIZE, 4096))));
    }

    @Test
    void refuseADeregisteredGpuSourceAndRegisterItAgain() throws Exception {
        final PeerProcesses peer = gpuPeer();
        sender.deregister(source);

        assertThatThrownBy(() -> sender.submit(SingleWrite.of(source, 0, 4096, peer.descriptor(), 0)))
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("deregistered");

        final MemoryRegion again = sender.register(source.segment(), Device.cuda(0));
        done(sender.submit(SingleWrite.of(again, 0, SIZE, peer.descriptor(), 0).withImm(5)));
        peer.ask("AWAIT 5 1", "COUNTED");
        assertThat(crc(peer)).isEqualTo(Long.toString(Checksums.crc32c(expected)));
    }

    @Test
    void readAPeerProcesssGpuMemoryIntoGpuMemoryAndPagedIntoHostMemory() throws Exception {
        final PeerProcesses peer = gpuPeer();
        done(sender.submit(SingleWrite.of(source, 0, SIZE, peer.descriptor(), 0))); // the bytes the reads pull back
        final GpuMemory back = GpuMemory.allocate(0, SIZE);
        resources.add(back);
        final MemoryRegion gpuDst = sender.register(back.segment(), Device.cuda(0));

        done(sender.submit(SingleRead.of(peer.descriptor(), 0, SIZE, gpuDst, 0)));

        final MemorySegment actual = arena.allocate(SIZE, 4096);
        back.copyToHost(actual);
        assertThat(actual.mismatch(expected)).isEqualTo(-1);

        final MemorySegment host = arena.allocate(SIZE, 4096);
        final int page = 64 << 10;
        final int pages = SIZE / page;
        final int[] srcPages = new int[pages];
        final int[] dstPages = new int[pages];
        for (int k = 0; k < pages; k++) {
            srcPages[k] = pages - 1 - k;
            dstPages[k] = k;
        }
        done(sender.submit(new PagedRead(
                peer.descriptor(), 0, page, srcPages, sender.register(host, Device.host()), 0, page, dstPages, page)));

        for (int k = 0; k < pages; k++) {
            assertThat(MemorySegment.mismatch(
                            expected,
                            (long) srcPages[k] * page,
                            (long) srcPages[k] * page + page,
                            host,
                            (long) k * page,
                            (long) k * page + page))
                    .as("page %d", k)
                    .isEqualTo(-1);
        }
        assertThat(crc(peer))
                .as("reads leave the owner's GPU memory as it was")
                .isEqualTo(Long.toString(Checksums.crc32c(expected)));
    }

    private static String crc(final PeerProcesses peer) throws IOException {
        return peer.ask("CRC", "CRC")[1];
    }

    /**
     * A write the target refuses fails, with a remote access error or (where the provider reports nothing back, as
     * shm did on 1.17) by the operation timeout: moves the manual clock past every deadline until it ended.
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
            throw new AssertionError("transfer failed", e.getCause());
        }
    }
}
