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
import dev.transferengine.TransferListener;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;

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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.awaitility.Awaitility;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Engines in two JVM processes: data and imm counts cross a real process boundary, a soak counts every imm of
 * 100,000 writes (by default) over 4 NICs exactly once, a killed peer fails only its own operations, and writes to a
 * stopped peer (SIGSTOP) end once each by their deadline, on a manual clock, and the peer is served again once it
 * continues (SIGCONT).
 */
public abstract class MultiProcessContract {

    private static final Duration WAIT = Duration.ofMinutes(2);

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

    private TransferEngine engine(final int nics) {
        return builder(nics).build();
    }

    private TransferEngineBuilder builder(final int nics) {
        final TransferEngineBuilder builder =
                TransferEngine.builder().transport(transport()).group(nics).operationTimeout(Duration.ofSeconds(30));
        for (final String option : options()) {
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
        try (TransferEngine engine = builder(1).clock(manualTime::get).build();
                Arena arena = Arena.ofShared();
                PeerProcesses peer = peer(1, 4096)) {
            final MemoryRegion src = engine.register(arena.allocate(4096, 4096), Device.host());
            final SingleWrite write = SingleWrite.of(src, 0, 4096, peer.descriptor(), 0);
            engine.submit(write).get(30, TimeUnit.SECONDS); // connected and working
            final List<AtomicInteger> ends = new ArrayList<>();
            final List<AtomicReference<@Nullable TransferEngineException>> errors = new ArrayList<>();
            peer.stop();
            try {
                for (int i = 0; i < 16; i++) {
                    final AtomicInteger end = new AtomicInteger();
                    final AtomicReference<@Nullable TransferEngineException> error = new AtomicReference<>();
                    ends.add(end);
                    errors.add(error);
                    engine.submit(write, new TransferListener() {
                        @Override
                        public void onDone() {
                            end.incrementAndGet();
                        }

                        @Override
                        public void onError(final TransferEngineException failure) {
                            error.set(failure);
                            end.incrementAndGet();
                        }
                    });
                }
                Awaitility.await()
                        .atMost(WAIT)
                        .until(() -> manualTime.addAndGet(Duration.ofDays(1).toNanos()) != 0
                                && ends.stream().allMatch(end -> end.get() > 0));
            } finally {
                peer.resume();
            }
            assertThat(ends).allSatisfy(end -> assertThat(end).hasValue(1));
            // a write may have reached the stopped peer's socket or memory before it stopped, and then completes
            assertThat(errors).allSatisfy(error -> assertThat(error.get())
                    .satisfiesAnyOf(e -> assertThat(e).isNull(), e -> assertThat(e)
                            .isInstanceOfAny(TransferTimeoutException.class, PeerUnreachableException.class)));
            assertThat(errors).anySatisfy(error -> assertThat(error.get()).isNotNull());

            Awaitility.await().atMost(WAIT).untilAsserted(() -> assertThat(engine.submit(write)
                            .handle((ok, failure) -> failure == null)
                            .get(30, TimeUnit.SECONDS))
                    .isTrue());
        }
    }

    @Test
    void killedPeerFailsItsInFlightWritesAndTheEngineServesAnotherPeer() throws Exception {
        final String limitation = killedPeerLimitation();
        org.junit.jupiter.api.Assumptions.assumeTrue(limitation == null, () -> limitation);
        try (TransferEngine engine = engine(2);
                Arena arena = Arena.ofShared()) {
            final MemoryRegion src = engine.register(arena.allocate(1 << 20, 4096), Device.host());
            final List<CompletableFuture<Void>> inFlight = new ArrayList<>();
            try (PeerProcesses doomed = peer(2, 1 << 20)) {
                final SingleWrite write =
                        new SingleWrite(src, 0, 1 << 20, doomed.descriptor(), 0, Routing.sharded(2), OptionalInt.of(1));
                engine.submit(write).get(30, TimeUnit.SECONDS); // connected and working
                for (int i = 0; i < 2000; i++) {
                    inFlight.add(engine.submit(write));
                }
                doomed.kill();
            }
            int failed = 0;
            for (final CompletableFuture<Void> future : inFlight) {
                try {
                    future.get(60, TimeUnit.SECONDS);
                } catch (final ExecutionException e) {
                    assertThat(e.getCause())
                            .isInstanceOfAny(PeerUnreachableException.class, TransferTimeoutException.class);
                    failed++;
                }
            }
            assertThat(failed).as("writes in flight when the peer died fail").isPositive();

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
                try (TransferEngine reader = builder(1).clock(manualTime::get).build()) {
                    final RegionDescriptor forged =
                            new RegionDescriptor(writeOnly.address(), writeOnly.length(), writeOnly.nics());
                    final Throwable refused = refusal(
                            manualTime,
                            reader.submit(SingleRead.of(forged, 0, 65_536, reader.register(dst, Device.host()), 0)));
                    assertThat(refused).isInstanceOfAny(RemoteAccessException.class, TransferTimeoutException.class);
                    assertThat(dst.asSlice(0, 65_536).mismatch(arena.allocate(65_536)))
                            .as("nothing of the write-only region landed")
                            .isEqualTo(-1);
                }
                try (TransferEngine writer = builder(1).clock(manualTime::get).build()) {
                    final RegionDescriptor forged =
                            new RegionDescriptor(readOnly.address(), readOnly.length(), readOnly.nics());
                    final Throwable refused = refusal(
                            manualTime,
                            writer.submit(SingleWrite.of(writer.register(dst, Device.host()), 0, 65_536, forged, 0)));
                    assertThat(refused).isInstanceOfAny(RemoteAccessException.class, TransferTimeoutException.class);
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
}
