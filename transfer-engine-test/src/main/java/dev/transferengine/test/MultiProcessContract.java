package dev.transferengine.test;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.Routing;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferEngineBuilder;
import dev.transferengine.TransferListener;
import dev.transferengine.exceptions.PeerUnreachableException;
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
}
