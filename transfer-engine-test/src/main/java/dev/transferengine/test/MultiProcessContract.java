package dev.transferengine.test;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.PagedRead;
import dev.transferengine.ReadSource;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.Routing;
import dev.transferengine.ScatterRead;
import dev.transferengine.SingleRead;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.awaitility.Awaitility;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Engines in two JVM processes: data and imm counts cross a real process boundary, a soak counts every imm of
 * 100,000 writes (by default) over 4 NICs exactly once, and the process faults: writes to a peer that is killed
 * (SIGKILL), stopped (SIGSTOP, then SIGCONT) or cut off by a network partition ({@link NetworkPartition}) end once
 * each, done or with a typed error, by their deadline plus 100 ms on a manual clock, and the engine serves the peer
 * (or another one) again afterwards.
 */
public abstract class MultiProcessContract {

    private static final Duration WAIT = Duration.ofMinutes(2);
    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(30);

    /** For a transport's test class. */
    protected MultiProcessContract() {}

    /**
     * The transport under test.
     *
     * @return its name
     */
    protected abstract String transport();

    /**
     * Writes in the soak; a provider whose small writes are slow here may run fewer.
     *
     * @return the count
     */
    protected int soakWrites() {
        return 100_000;
    }

    /**
     * Why killing a peer process cannot be survived on this transport here (the killed-peer test skips, saying
     * so), or null.
     *
     * @return the reason, or null
     */
    protected @Nullable String killedPeerLimitation() {
        return null;
    }

    /**
     * Extra options for both engines.
     *
     * @return {@code key=value} pairs
     */
    protected List<String> options() {
        return List.of();
    }

    /**
     * Why a network partition cannot come between two processes on this transport (the partition test skips, saying
     * so), or null.
     *
     * @return the reason, or null
     */
    protected @Nullable String partitionLimitation() {
        return null;
    }

    /**
     * Extra options both engines need to listen off loopback, as they do across the partition (e.g. tcp's cluster
     * key).
     *
     * @return {@code key=value} pairs
     */
    protected List<String> offLoopbackOptions() {
        return List.of();
    }

    private TransferEngine engine(final int nics) {
        return builder(nics, List.of()).build();
    }

    private TransferEngineBuilder builder(final int nics, final List<String> extraOptions) {
        final TransferEngineBuilder builder =
                TransferEngine.builder().transport(transport()).group(nics).operationTimeout(OPERATION_TIMEOUT);
        for (final String option : options()) {
            final String[] kv = option.split("=", 2);
            builder.option(kv[0], kv[1]);
        }
        for (final String option : extraOptions) {
            final String[] kv = option.split("=", 2);
            builder.option(kv[0], kv[1]);
        }
        return builder;
    }

    private PeerProcesses peer(final int nics, final long regionBytes) throws Exception {
        final List<String> args =
                new ArrayList<>(List.of(transport(), Integer.toString(nics), Long.toString(regionBytes)));
        args.addAll(options());
        return PeerProcesses.start(args.toArray(String[]::new));
    }

    @Test
    void soakCountsEveryImmOfItsWritesOverFourNicsExactlyOnce() throws Exception {
        final int nics = 4;
        final int writes = soakWrites();
        final long slot = 16 * 1024; // sharded(4): two 8 KiB shards and two zero-length ones per write
        final int slots = 64;
        final int imms = 8;
        try (PeerProcesses peer = peer(nics, slot * slots);
                TransferEngine engine = engine(nics);
                Arena arena = Arena.ofShared()) {
            final MemorySegment src = arena.allocate(slot * slots * 2, 4096);
            // source slots s and s + 64 hold the same bytes: writes to one destination slot may land in any order
            // across NICs, and the final contents must not depend on it
            final SplittableRandom random = new SplittableRandom(2024);
            for (long i = 0; i < slot * slots; i += 8) {
                src.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
            }
            MemorySegment.copy(src, 0, src, slot * slots, slot * slots);
            final MemoryRegion region = engine.register(src, Device.host());
            final SingleWrite[] requests = new SingleWrite[slots * 2];
            for (int s = 0; s < requests.length; s++) {
                requests[s] = new SingleWrite(
                        region,
                        slot * s,
                        slot,
                        peer.descriptor(),
                        slot * (s % slots),
                        Routing.sharded(nics),
                        OptionalInt.of(s % imms));
            }
            final TransferCounters counters = new TransferCounters();
            final long[] perImm = new long[imms];
            final int window = 512;
            for (int i = 0; i < writes; i++) {
                if (i >= window) {
                    counters.awaitCompleted(i - window + 1, WAIT);
                }
                final int s = (i * 7 + i / 3) % requests.length;
                engine.submit(requests[s], counters);
                perImm[s % imms] += nics;
            }
            counters.awaitCompleted(writes, WAIT);
            assertThat(counters.failed()).isZero();

            for (int imm = 0; imm < imms; imm++) {
                final String[] counted = peer.ask("AWAIT " + imm + " " + perImm[imm], "COUNTED");
                assertThat(Long.parseLong(counted[2]))
                        .as("imm %d counted exactly", imm)
                        .isZero();
            }
            assertThat(Long.parseLong(peer.ask("CRC", "CRC")[1]))
                    .isEqualTo(Checksums.crc32c(src.asSlice(0, slot * slots)));
        }
    }

    @Test
    void sendsCrossTheProcessBoundary() throws Exception {
        try (PeerProcesses peer = peer(1, 4096);
                TransferEngine engine = engine(1)) {
            for (int i = 0; i < 100; i++) {
                engine.send(peer.address(), ("control message " + i).getBytes()).get(30, TimeUnit.SECONDS);
            }
            final String[] received = peer.ask("RECEIVED 100", "RECEIVED");
            assertThat(Long.parseLong(received[1])).isEqualTo(100);
        }
    }

    @Test
    void writesToAStoppedPeerEndOnceEachByTheirDeadlineAndThePeerIsServedAgainWhenItContinues() throws Exception {
        final AtomicLong manualTime = new AtomicLong();
        try (TransferEngine engine =
                        watched(builder(1, List.of())).clock(manualTime::get).build();
                Arena arena = Arena.ofShared();
                PeerProcesses peer = peer(1, 1 << 20)) {
            // 16 MiB in all, more than the sockets between the processes buffer: some writes cannot complete
            final MemoryRegion src = engine.register(arena.allocate(1 << 20, 4096), Device.host());
            final SingleWrite write = SingleWrite.of(src, 0, 1 << 20, peer.descriptor(), 0);
            engine.submit(write).get(30, TimeUnit.SECONDS); // connected and working
            final List<Outcome> outcomes = new ArrayList<>();
            peer.stop();
            try {
                final long submittedAt = manualTime.get();
                for (int i = 0; i < 16; i++) {
                    final Outcome outcome = new Outcome();
                    outcomes.add(outcome);
                    engine.submit(write, outcome);
                }
                awaitPosted(engine, 1 + 16);
                Outcome.endByTheBound(manualTime, submittedAt, OPERATION_TIMEOUT, outcomes, WAIT);
            } finally {
                peer.resume();
            }
            // a write may reach the stopped peer's socket or memory (shm's CMA copies into it without the peer) and
            // then completes: how many do is timing, so only each write's outcome is asserted
            assertThat(outcomes).allSatisfy(o -> assertThat(o.error.get())
                    .satisfiesAnyOf(e -> assertThat(e).isNull(), e -> assertThat(e)
                            .isInstanceOfAny(TransferTimeoutException.class, PeerUnreachableException.class)));

            Awaitility.await().atMost(WAIT).untilAsserted(() -> assertThat(engine.submit(write)
                            .handle((ok, failure) -> failure == null)
                            .get(30, TimeUnit.SECONDS))
                    .isTrue());
        }
    }

    @Test
    void killedPeerFailsItsInFlightWritesOnceEachByTheirDeadlineAndTheEngineServesAnotherPeer() throws Exception {
        final String limitation = killedPeerLimitation();
        Assumptions.assumeTrue(limitation == null, () -> limitation);
        final AtomicLong manualTime = new AtomicLong();
        try (TransferEngine engine =
                        watched(builder(2, List.of())).clock(manualTime::get).build();
                Arena arena = Arena.ofShared()) {
            final MemoryRegion src = engine.register(arena.allocate(1 << 20, 4096), Device.host());
            final List<Outcome> outcomes = new ArrayList<>();
            final long submittedAt = manualTime.get();
            try (PeerProcesses doomed = peer(2, 1 << 20)) {
                final SingleWrite write =
                        new SingleWrite(src, 0, 1 << 20, doomed.descriptor(), 0, Routing.sharded(2), OptionalInt.of(1));
                engine.submit(write).get(30, TimeUnit.SECONDS); // connected and working
                for (int i = 0; i < 2000; i++) {
                    final Outcome outcome = new Outcome();
                    outcomes.add(outcome);
                    engine.submit(write, outcome);
                }
                awaitPosted(engine, 1 + 2000);
                doomed.kill();
            }
            Outcome.endByTheBound(manualTime, submittedAt, OPERATION_TIMEOUT, outcomes, WAIT);
            assertThat(outcomes).allSatisfy(o -> assertThat(o.error.get())
                    .satisfiesAnyOf(e -> assertThat(e).isNull(), e -> assertThat(e)
                            .isInstanceOfAny(PeerUnreachableException.class, TransferTimeoutException.class)));
            assertThat(outcomes)
                    .as("writes in flight when the peer died fail")
                    .anySatisfy(o -> assertThat(o.error.get()).isNotNull());

            try (PeerProcesses survivor = peer(2, 1 << 20)) {
                engine.submit(new SingleWrite(
                                src, 0, 1 << 20, survivor.descriptor(), 0, Routing.sharded(2), OptionalInt.of(2)))
                        .get(30, TimeUnit.SECONDS);
                assertThat(survivor.ask("AWAIT 2 2", "COUNTED")[2]).isEqualTo("0");
            }
        }
    }

    /**
     * Reads (pull) across the process boundary: every read shape lands the owner process's bytes and leaves them
     * as they were, the owner process refuses forged reads of a write-only region and forged writes into a
     * read-only one, and reads in flight from a peer that is killed each end once, typed, by their deadline.
     */
    @Nested
    class Reads {

        private static final long REGION = 1 << 20;

        @Test
        void singlePagedAndScatterReadsPullTheOwnerProcesssBytesAndLeaveThemAsTheyWere() throws Exception {
            try (PeerProcesses owner = peer(2, REGION);
                    TransferEngine engine = engine(2);
                    Arena arena = Arena.ofShared()) {
                final MemorySegment pattern = arena.allocate(REGION, 4096);
                final SplittableRandom random = new SplittableRandom(19);
                for (long i = 0; i < REGION; i += 8) {
                    pattern.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
                }
                final RegionDescriptor src = owner.descriptor();
                engine.submit(new SingleWrite(
                                engine.register(pattern, Device.host()),
                                0,
                                REGION,
                                src,
                                0,
                                Routing.sharded(2),
                                OptionalInt.empty()))
                        .get(30, TimeUnit.SECONDS);
                final MemorySegment dst = arena.allocate(REGION, 4096);
                final MemoryRegion local = engine.register(dst, Device.host());

                engine.submit(new SingleRead(src, 4096, REGION - 8192, local, 100, Routing.sharded(2)))
                        .get(30, TimeUnit.SECONDS);
                assertThat(MemorySegment.mismatch(pattern, 4096, REGION - 4096, dst, 100, REGION - 8192 + 100))
                        .isEqualTo(-1);

                final int pages = 256;
                final int[] srcPages = new int[pages];
                final int[] dstPages = new int[pages];
                for (int k = 0; k < pages; k++) {
                    srcPages[k] = (k * 37) % pages;
                    dstPages[k] = k;
                }
                engine.submit(new PagedRead(src, 0, 4096, srcPages, local, 0, 4096, dstPages, 4096))
                        .get(30, TimeUnit.SECONDS);
                for (int k = 0; k < pages; k++) {
                    assertThat(MemorySegment.mismatch(
                                    pattern,
                                    4096L * srcPages[k],
                                    4096L * srcPages[k] + 4096,
                                    dst,
                                    4096L * k,
                                    4096L * k + 4096))
                            .as("page %d", k)
                            .isEqualTo(-1);
                }

                dst.fill((byte) 0);
                engine.submit(ScatterRead.of(
                                local,
                                List.of(
                                        new ReadSource(src, 300_001, 17, 0),
                                        new ReadSource(src, 200_000, 500_000, 400_000))))
                        .get(30, TimeUnit.SECONDS);
                assertThat(MemorySegment.mismatch(pattern, 17, 300_018, dst, 0, 300_001))
                        .isEqualTo(-1);
                assertThat(MemorySegment.mismatch(pattern, 500_000, 700_000, dst, 400_000, 600_000))
                        .isEqualTo(-1);

                assertThat(Long.parseLong(owner.ask("CRC", "CRC")[1]))
                        .as("reads leave the owner's memory as it was")
                        .isEqualTo(Checksums.crc32c(pattern));
            }
        }

        @Test
        void theOwnerProcessRefusesForgedReadsOfAWriteOnlyRegionAndForgedWritesIntoAReadOnlyOne() throws Exception {
            final AtomicLong manualTime = new AtomicLong();
            try (PeerProcesses owner = peer(1, 65_536);
                    Arena arena = Arena.ofShared()) {
                final RegionDescriptor writeOnly =
                        RegionDescriptor.parse(owner.ask("REGISTER WRITE_ONLY", "REGISTERED")[1]);
                final RegionDescriptor readOnly =
                        RegionDescriptor.parse(owner.ask("REGISTER READ_ONLY", "REGISTERED")[1]);
                final MemorySegment dst = arena.allocate(65_536, 4096);
                // each refusal on an engine of its own: a libfabric provider may leave a refused peer's path broken
                try (TransferEngine reader =
                        builder(1, List.of()).clock(manualTime::get).build()) {
                    final RegionDescriptor forged =
                            new RegionDescriptor(writeOnly.address(), writeOnly.length(), writeOnly.nics());
                    final Throwable refused = refusal(
                            manualTime,
                            reader.submit(SingleRead.of(forged, 0, 65_536, reader.register(dst, Device.host()), 0)));
                    // tcp;ofi_rxm's target drops the connection of a refused operation: the sender may see it as a
                    // broken peer
                    assertThat(refused)
                            .isInstanceOfAny(
                                    RemoteAccessException.class,
                                    TransferTimeoutException.class,
                                    PeerUnreachableException.class);
                    assertThat(dst.asSlice(0, 65_536).mismatch(arena.allocate(65_536)))
                            .as("nothing of the write-only region landed")
                            .isEqualTo(-1);
                }
                try (TransferEngine writer =
                        builder(1, List.of()).clock(manualTime::get).build()) {
                    final RegionDescriptor forged =
                            new RegionDescriptor(readOnly.address(), readOnly.length(), readOnly.nics());
                    final Throwable refused = refusal(
                            manualTime,
                            writer.submit(SingleWrite.of(writer.register(dst, Device.host()), 0, 65_536, forged, 0)));
                    // tcp;ofi_rxm's target drops the connection of a refused operation: the sender may see it as a
                    // broken peer
                    assertThat(refused)
                            .isInstanceOfAny(
                                    RemoteAccessException.class,
                                    TransferTimeoutException.class,
                                    PeerUnreachableException.class);
                }
                try (TransferEngine reader = engine(1)) {
                    reader.submit(SingleRead.of(readOnly, 0, 65_536, reader.register(dst, Device.host()), 0))
                            .get(30, TimeUnit.SECONDS);
                    final MemorySegment untouched = arena.allocate(65_536).fill((byte) 0x5A);
                    assertThat(dst.mismatch(untouched))
                            .as("the read-only region is as registered")
                            .isEqualTo(-1);
                }
            }
        }

        @Test
        void readsFromAKilledPeerEndOnceEachTypedByTheirDeadlineAndTheEngineReadsFromAnotherPeer() throws Exception {
            final String limitation = killedPeerLimitation();
            org.junit.jupiter.api.Assumptions.assumeTrue(limitation == null, () -> limitation);
            try (TransferEngine engine = engine(2);
                    Arena arena = Arena.ofShared()) {
                final MemoryRegion dst = engine.register(arena.allocate(REGION, 4096), Device.host());
                final List<CompletableFuture<Void>> inFlight = new ArrayList<>();
                try (PeerProcesses doomed = peer(2, REGION)) {
                    final SingleRead read = new SingleRead(doomed.descriptor(), 0, REGION, dst, 0, Routing.sharded(2));
                    engine.submit(read).get(30, TimeUnit.SECONDS); // connected and working
                    for (int i = 0; i < 500; i++) {
                        inFlight.add(engine.submit(read));
                    }
                    doomed.kill();
                }
                int failed = 0;
                for (final CompletableFuture<Void> future : inFlight) {
                    try {
                        future.get(60, TimeUnit.SECONDS); // the operation timeout is 30 s
                    } catch (final ExecutionException e) {
                        assertThat(e.getCause())
                                .isInstanceOfAny(PeerUnreachableException.class, TransferTimeoutException.class);
                        failed++;
                    }
                }
                assertThat(failed).as("reads in flight when the peer died fail").isPositive();

                try (PeerProcesses survivor = peer(2, REGION)) {
                    engine.submit(new SingleRead(survivor.descriptor(), 0, REGION, dst, 0, Routing.sharded(2)))
                            .get(30, TimeUnit.SECONDS);
                }
            }
        }

        /** Moves the manual clock until {@code operation} ended; its failure, which it must have. */
        private Throwable refusal(final AtomicLong manualTime, final CompletableFuture<Void> operation) {
            Awaitility.await()
                    .atMost(WAIT)
                    .until(() -> manualTime.addAndGet(Duration.ofDays(1).toNanos()) != 0 && operation.isDone());
            assertThat(operation).isCompletedExceptionally();
            return operation.handle((ok, failure) -> failure).join();
        }
    }

    /**
     * A real partition ({@link NetworkPartition}): the peer runs in a network namespace whose every packet is dropped
     * both ways, so nothing answers and nothing is refused. The writes caught in it end once each by their deadline
     * (or earlier, where the transport finds the connection silent), what was delivered before stays delivered, and
     * once the partition heals later writes land. The caught writes carry an imm of their own: what they still
     * deliver late lands with the same bytes, and their negative acknowledgements end nobody's wait for the others.
     */
    @Test
    void writesCaughtInAPartitionEndOnceEachByTheirDeadlineAndLaterWritesLandOnceItHeals() throws Exception {
        final String limitation = partitionLimitation();
        Assumptions.assumeTrue(limitation == null, () -> limitation);
        final int slot = 64 * 1024;
        final int slots = 16;
        final long size = (long) slot * slots;
        final int imm = 7;
        final int caughtImm = 8;
        final AtomicLong manualTime = new AtomicLong();
        try (NetworkPartition partition = NetworkPartition.open();
                PeerProcesses peer = partitionedPeer(partition, size);
                TransferEngine engine = watched(builder(1, offLoopbackOptions()))
                        .bindAddress(partition.hostAddress())
                        .clock(manualTime::get)
                        .build();
                Arena arena = Arena.ofShared()) {
            final MemorySegment bytes = arena.allocate(size, 4096);
            for (long i = 0; i < size; i++) {
                bytes.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + 5));
            }
            final MemoryRegion src = engine.register(bytes, Device.host());
            final RegionDescriptor remote = peer.descriptor();
            engine.submit(slotWrite(src, remote, slot, 0, imm)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(peer.ask("AWAIT " + imm + " 1", "COUNTED")[2]).isEqualTo("0");

            partition.drop();
            final List<Outcome> caught = new ArrayList<>();
            final long submittedAt = manualTime.get();
            for (int s = 1; s < 8; s++) { // all in flight at once, none can be answered
                final Outcome outcome = new Outcome();
                caught.add(outcome);
                engine.submit(slotWrite(src, remote, slot, s, caughtImm), outcome);
            }
            awaitPosted(engine, 1 + 7);
            Outcome.endByTheBound(manualTime, submittedAt, OPERATION_TIMEOUT, caught, WAIT);
            assertThat(caught).allSatisfy(o -> assertThat(o.error.get())
                    .isInstanceOfAny(TransferTimeoutException.class, PeerUnreachableException.class));

            partition.heal();
            // the first writes after the partition may still find the peer marked unreachable
            Awaitility.await().atMost(WAIT).pollInterval(Duration.ofMillis(200)).until(() -> engine.submit(
                            slotWrite(src, remote, slot, 1, imm))
                    .handle((ok, failure) -> failure == null)
                    .get(WAIT.toSeconds(), TimeUnit.SECONDS));
            for (int s = 2; s < slots; s++) { // the caught slots again, then the rest
                engine.submit(slotWrite(src, remote, slot, s, imm)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            peer.ask("AWAIT " + imm + " " + (slots - 1), "COUNTED");
            // late bytes of the caught writes, if any landed, are the same bytes
            assertThat(peer.ask("CRC", "CRC")[1]).isEqualTo(Long.toString(Checksums.crc32c(bytes)));
            assertThat(peer.ask("HEALTH", "HEALTH")[1]).isEqualTo("true");
            assertThat(engine.isHealthy()).isTrue();
        }
    }

    /**
     * The transport under test wrapped in {@link HoldingTransport}, which holds nothing here: its NICs count the
     * writes the worker posted ({@link HoldingDomain#writes()}), so a test knows when every deadline was set (the
     * worker sets one when it takes an operation) before it moves the manual clock.
     */
    private TransferEngineBuilder watched(final TransferEngineBuilder builder) {
        return builder.option(HoldingTransport.WRAPPED, transport()).transport(HoldingTransport.NAME);
    }

    /** Waits until the worker posted {@code writes} writes to NIC 0 of a {@link #watched} engine. */
    private static void awaitPosted(final TransferEngine engine, final long writes) {
        final HoldingDomain nic = HoldingDomain.at(engine.mainAddress());
        Awaitility.await().atMost(WAIT).until(() -> nic.writes() >= writes);
    }

    private PeerProcesses partitionedPeer(final NetworkPartition partition, final long regionBytes) throws IOException {
        final List<String> args = new ArrayList<>(
                List.of(transport(), "1", Long.toString(regionBytes), "bindAddress=" + partition.peerAddress()));
        args.addAll(options());
        args.addAll(offLoopbackOptions());
        return PeerProcesses.start(partition.launcher(), List.of(), args.toArray(String[]::new));
    }

    private static SingleWrite slotWrite(
            final MemoryRegion src, final RegionDescriptor remote, final int slot, final int index, final int imm) {
        return SingleWrite.of(src, (long) slot * index, slot, remote, (long) slot * index)
                .withImm(imm);
    }
}
