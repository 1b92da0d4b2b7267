package dev.transferengine.core;

import dev.transferengine.ApiTestAccess;
import dev.transferengine.Device;
import dev.transferengine.EngineConfig;
import dev.transferengine.EngineCounter;
import dev.transferengine.ImmCountState;
import dev.transferengine.NicCounter;
import dev.transferengine.PagedWrite;
import dev.transferengine.RegionAccess;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.Routing;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferListener;
import dev.transferengine.WriteRequest;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;
import dev.transferengine.exceptions.WorkerFailedException;
import dev.transferengine.test.LoopbackNetwork;
import dev.transferengine.test.LoopbackNetwork.LoopbackDomain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Drives groups by calling {@code doWork()} on the test thread, over an in-memory {@link LoopbackNetwork} and a
 * manual clock: sharding, completion, failures, timeouts, close and restart without threads or sleeps.
 */
class DomainGroupTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Region.Owner NO_REKEY = region -> {
        throw new UnsupportedOperationException("not in these tests");
    };

    private final LoopbackNetwork network = new LoopbackNetwork();
    private final Arena arena = Arena.ofConfined();
    private long now = 1_000_000_000L;

    /** One engine's worth of core state around a single group. */
    private final class Side {
        final Counters counters;
        final CallbackDispatcher callbacks;
        final ImmCountTable imms;
        final DomainGroup group;
        final Submissions pool = new Submissions(64);

        Side(final int nics, final int maxUnexpectedImms) {
            final EngineConfig config = TransferEngine.builder()
                    .group(nics)
                    .operationTimeout(TIMEOUT)
                    .maxUnexpectedImms(maxUnexpectedImms)
                    .config();
            counters = new Counters(List.of(nics), ApiTestAccess.transferCountersUpdater());
            callbacks = new CallbackDispatcher(counters);
            imms = new ImmCountTable(
                    callbacks,
                    counters,
                    config.maxUnexpectedImms(),
                    config.unexpectedImmTtl().toNanos(),
                    now);
            group = new DomainGroup(
                    0,
                    config.groups().getFirst(),
                    config,
                    new WorkerServices(network, imms, callbacks, counters, new SendBuffers(), pool, () -> now));
            group.onStart();
        }

        Region register(final MemorySegment segment) {
            return group.resources().register(NO_REKEY, segment, Device.host(), RegionAccess.READ_WRITE, null);
        }

        void submit(final WriteRequest request, final TransferCounters done) {
            counters.inFlight(1);
            assertThat(group.offer(pool.acquire().write(request, null, done, null)))
                    .isTrue();
        }

        void submit(final WriteRequest request, final TransferListener listener) {
            counters.inFlight(1);
            assertThat(group.offer(pool.acquire().write(request, listener, null, null)))
                    .isTrue();
        }

        LoopbackDomain nic(final int nic) {
            return (LoopbackDomain) group.domain(nic);
        }

        void runCallbacks() {
            while (callbacks.doWork() > 0) {
                // drain
            }
        }
    }

    /** Records the one completion of a request. */
    private static final class Outcome implements TransferListener {
        final List<Object> events = new ArrayList<>();

        @Override
        public void onDone() {
            events.add("done");
        }

        @Override
        public void onError(final TransferEngineException error) {
            events.add(error);
        }
    }

    @AfterEach
    void closeArena() {
        arena.close();
    }

    private MemorySegment pattern(final int size) {
        final MemorySegment segment = arena.allocate(size);
        for (int i = 0; i < size; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 1));
        }
        return segment;
    }

    private static void work(final Side... sides) {
        for (int round = 0; round < 3; round++) {
            for (final Side side : sides) {
                side.group.doWork();
            }
        }
    }

    @Test
    void aShardedWriteGoesOutOnEveryNicAndCompletesOnceAfterItsLastPiece() {
        final Side sender = new Side(4, 16);
        final Side receiver = new Side(4, 16);
        final MemorySegment src = pattern(40_000);
        final MemorySegment dst = arena.allocate(40_000);
        final RegionDescriptor dstDesc = receiver.register(dst).descriptor();
        final TransferCounters done = new TransferCounters();
        sender.nic(3).holdPosts(true);

        sender.submit(
                new SingleWrite(sender.register(src), 0, 40_000, dstDesc, 0, Routing.sharded(4), OptionalInt.of(7)),
                done);
        work(sender, receiver);

        assertThat(done.completed()).as("one shard still waits on NIC 3").isZero();
        sender.nic(3).holdPosts(false);
        work(sender, receiver);

        assertThat(done.done()).isEqualTo(1);
        assertThat(done.failed()).isZero();
        for (int nic = 0; nic < 4; nic++) {
            assertThat(sender.counters.counter(0, nic, NicCounter.WRITES))
                    .as("NIC " + nic)
                    .isEqualTo(1);
        }
        assertThat(MemorySegment.mismatch(src, 0, 40_000, dst, 0, 40_000)).isEqualTo(-1);
        assertThat(receiver.imms.remove(7)).isEqualTo(new ImmCountState(4, 0));
        assertThat(sender.counters.inFlight()).isZero();
    }

    @Test
    void pagesAreSpreadOverTheNicsInContiguousRanges() {
        final Side sender = new Side(2, 16);
        final Side receiver = new Side(2, 16);
        final RegionDescriptor dst = receiver.register(arena.allocate(8192)).descriptor();
        final TransferCounters done = new TransferCounters();

        sender.submit(PagedWrite.of(sender.register(pattern(8192)), dst, 1024, new int[] {0, 1, 2, 3, 4, 5, 6}), done);
        work(sender, receiver);

        assertThat(done.done()).isEqualTo(1);
        assertThat(sender.counters.counter(0, 0, NicCounter.WRITES)).isEqualTo(4);
        assertThat(sender.counters.counter(0, 1, NicCounter.WRITES)).isEqualTo(3);
    }

    @Test
    void aRequestWhosePiecesFailReportsItsFirstErrorOnceAndNoSuccess() {
        final Side sender = new Side(2, 16);
        final Side receiver = new Side(2, 16);
        final RegionDescriptor real = receiver.register(arena.allocate(4096)).descriptor();
        final RegionDescriptor badKeys = new RegionDescriptor(
                real.address(),
                real.length(),
                List.of(
                        new RegionDescriptor.Nic(real.nic(0).address(), 999),
                        new RegionDescriptor.Nic(real.nic(1).address(), 998)));
        final Outcome outcome = new Outcome();

        sender.submit(
                new SingleWrite(
                        sender.register(pattern(4096)), 0, 4096, badKeys, 0, Routing.sharded(2), OptionalInt.empty()),
                outcome);
        work(sender, receiver);
        sender.runCallbacks();

        assertThat(outcome.events).singleElement().isInstanceOfSatisfying(RemoteAccessException.class, e -> assertThat(
                        e.reason())
                .isEqualTo(RemoteAccessException.Reason.UNKNOWN_KEY));
        assertThat(sender.counters.counter(EngineCounter.REQUESTS_FAILED)).isEqualTo(1);
        assertThat(sender.counters.counter(0, 0, NicCounter.WRITE_ERRORS)
                        + sender.counters.counter(0, 1, NicCounter.WRITE_ERRORS))
                .isEqualTo(2);
        assertThat(sender.counters.inFlight()).isZero();
    }

    @Test
    void aTimedOutWriteFailsOnceIsWithdrawnFromItsNicAndNeverLands() {
        final Side sender = new Side(1, 16);
        final Side receiver = new Side(1, 16);
        final MemorySegment dst = arena.allocate(4096);
        final RegionDescriptor dstDesc = receiver.register(dst).descriptor();
        final Outcome outcome = new Outcome();
        sender.nic(0).holdPosts(true);
        sender.submit(
                SingleWrite.of(sender.register(pattern(4096)), 0, 4096, dstDesc, 0)
                        .withImm(3),
                outcome);
        work(sender, receiver);

        now += TIMEOUT.toNanos(); // exactly the timeout: not past it yet
        work(sender, receiver);
        assertThat(outcome.events).isEmpty();
        now += Duration.ofMillis(100).toNanos(); // the timeout scan runs at most every 100 ms
        work(sender, receiver);
        sender.nic(0).holdPosts(false);
        work(sender, receiver);
        sender.runCallbacks();

        assertThat(outcome.events).singleElement().isInstanceOf(TransferTimeoutException.class);
        assertThat(sender.counters.counter(EngineCounter.REQUESTS_TIMED_OUT)).isEqualTo(1);
        assertThat(sender.nic(0).cancelled()).hasSize(1);
        assertThat(sender.nic(0).waitingPosts()).isZero();
        assertThat(dst.get(ValueLayout.JAVA_BYTE, 0))
                .as("withdrawn before it was placed")
                .isZero();
        assertThat(receiver.imms.remove(3)).isNull();
    }

    @Test
    void aCompletionThatArrivesAfterTheTimeoutIsIgnored() {
        final Side sender = new Side(1, 16);
        final Side receiver = new Side(1, 16);
        final RegionDescriptor dstDesc = receiver.register(arena.allocate(4096)).descriptor();
        final Region src = sender.register(pattern(4096));
        final Outcome late = new Outcome();
        sender.nic(0).holdCompletions(true);
        sender.submit(SingleWrite.of(src, 0, 4096, dstDesc, 0), late);
        work(sender, receiver);

        now += TIMEOUT.toNanos() + 1;
        work(sender, receiver);
        sender.nic(0).holdCompletions(false);
        final Outcome next = new Outcome();
        sender.submit(SingleWrite.of(src, 0, 4096, dstDesc, 0), next);
        work(sender, receiver);
        sender.runCallbacks();

        assertThat(late.events).singleElement().isInstanceOf(TransferTimeoutException.class);
        assertThat(next.events).containsExactly("done");
        assertThat(sender.counters.counter(EngineCounter.REQUESTS_DONE)).isEqualTo(1);
        assertThat(sender.counters.counter(EngineCounter.WORKER_ERRORS)).isZero();
    }

    @Test
    void closingLetsWhatEndedCountAndFailsTheRestWithEngineClosed() {
        final Side sender = new Side(1, 16);
        final Side receiver = new Side(1, 16);
        final RegionDescriptor dstDesc = receiver.register(arena.allocate(4096)).descriptor();
        final Region src = sender.register(pattern(4096));
        final Outcome ended = new Outcome();
        final Outcome held = new Outcome();
        final Outcome queued = new Outcome();
        sender.submit(SingleWrite.of(src, 0, 4096, dstDesc, 0), ended);
        work(sender, receiver);
        sender.nic(0).holdPosts(true);
        sender.submit(SingleWrite.of(src, 0, 4096, dstDesc, 0), held);
        sender.group.doWork();
        sender.submit(SingleWrite.of(src, 0, 4096, dstDesc, 0), queued);

        sender.group.onClose();
        sender.runCallbacks();

        assertThat(ended.events).containsExactly("done");
        assertThat(held.events).singleElement().isInstanceOf(EngineClosedException.class);
        assertThat(queued.events).singleElement().isInstanceOf(EngineClosedException.class);
        assertThat(sender.nic(0).isClosed()).isTrue();
        assertThat(sender.counters.inFlight()).isZero();
    }

    /** A write with an imm that the worker never took fails at close like a posted one: its receiver is told. */
    @Test
    void closingTellsTheReceiverOfAnImmWriteTheWorkerNeverStarted() {
        final Side sender = new Side(1, 16);
        final Side receiver = new Side(1, 16);
        final RegionDescriptor dstDesc = receiver.register(arena.allocate(4096)).descriptor();
        final Outcome queued = new Outcome();
        sender.submit(
                SingleWrite.of(sender.register(pattern(4096)), 0, 4096, dstDesc, 0)
                        .withImm(9),
                queued);

        sender.group.onClose();
        sender.runCallbacks();

        assertThat(queued.events).singleElement().isInstanceOf(EngineClosedException.class);
        assertThat(sender.counters.counter(EngineCounter.IMMS_ABANDONED_SENT)).isEqualTo(1);
    }

    @Test
    void anUnexpectedExceptionInAPollIsCountedAndTheWorkerGoesOn() {
        final Side sender = new Side(1, 16);
        final Side receiver = new Side(1, 16);
        final RegionDescriptor dstDesc = receiver.register(arena.allocate(4096)).descriptor();
        final TransferCounters done = new TransferCounters();
        sender.nic(0).failNextPoll(() -> new IllegalStateException("injected"));

        sender.submit(SingleWrite.of(sender.register(pattern(4096)), 0, 4096, dstDesc, 0), done);
        work(sender, receiver);

        assertThat(sender.counters.counter(EngineCounter.WORKER_ERRORS)).isEqualTo(1);
        assertThat(sender.group.failure()).isNull();
        assertThat(done.done()).isEqualTo(1);
    }

    @Test
    void anErrorFailsWhatIsInFlightMarksTheGroupDownAndItsNicsReopenWithTheirRegions() {
        final Side sender = new Side(2, 16);
        final Side receiver = new Side(2, 16);
        final MemorySegment dst = arena.allocate(4096);
        final RegionDescriptor dstDesc = receiver.register(dst).descriptor();
        final Region src = sender.register(pattern(4096));
        final RegionDescriptor before = src.descriptor();
        final Outcome inFlight = new Outcome();
        sender.nic(1).holdPosts(true);
        sender.submit(new SingleWrite(src, 0, 4096, dstDesc, 0, Routing.sharded(2), OptionalInt.empty()), inFlight);
        sender.group.doWork();
        final LoopbackDomain failing = sender.nic(0);
        failing.failNextPoll(() -> new OutOfMemoryError("injected"));

        sender.group.doWork();
        sender.runCallbacks();

        assertThat(inFlight.events).singleElement().isInstanceOfSatisfying(WorkerFailedException.class, e -> assertThat(
                        e.getCause())
                .isInstanceOf(OutOfMemoryError.class));
        assertThat(sender.group.failure()).contains("OutOfMemoryError");
        assertThat(sender.counters.counter(EngineCounter.WORKER_RESTARTS)).isEqualTo(1);
        assertThat(failing.isClosed()).isTrue();
        final Outcome whileDown = new Outcome();
        sender.submit(SingleWrite.of(src, 0, 16, dstDesc, 0).withRouting(Routing.pinned(0)), whileDown);

        sender.group.doWork(); // reopens: the back-off starts at the failure
        sender.runCallbacks();

        assertThat(whileDown.events).singleElement().isInstanceOf(WorkerFailedException.class);
        assertThat(sender.group.failure()).isNull();
        assertThat(sender.nic(0)).isNotSameAs(failing);
        assertThat(src.descriptor()).as("registered again on the new NICs").isNotEqualTo(before);
        final TransferCounters after = new TransferCounters();
        sender.submit(new SingleWrite(src, 0, 4096, dstDesc, 0, Routing.sharded(2), OptionalInt.empty()), after);
        work(sender, receiver);
        assertThat(after.done()).isEqualTo(1);
        assertThat(MemorySegment.mismatch(src.segment(), 0, 4096, dst, 0, 4096)).isEqualTo(-1);
    }

    @Test
    void aBrokenJvmFailsWhatIsInFlightAndLeavesTheGroupDownFailingEveryLaterRequest() {
        final Side sender = new Side(1, 16);
        final Side receiver = new Side(1, 16);
        final RegionDescriptor dstDesc = receiver.register(arena.allocate(4096)).descriptor();
        final Region src = sender.register(pattern(4096));
        final Outcome inFlight = new Outcome();
        sender.nic(0).holdPosts(true);
        sender.submit(SingleWrite.of(src, 0, 4096, dstDesc, 0), inFlight);
        sender.group.doWork();
        final LoopbackDomain failing = sender.nic(0);
        failing.failNextPoll(() -> new InternalError("injected"));

        sender.group.doWork();
        now += TimeUnit.SECONDS.toNanos(10); // far past the reopen back-off
        final Outcome later = new Outcome();
        sender.submit(SingleWrite.of(src, 0, 16, dstDesc, 0), later);
        sender.group.doWork();
        sender.runCallbacks();

        assertThat(inFlight.events).singleElement().isInstanceOfSatisfying(WorkerFailedException.class, e -> assertThat(
                        e.getCause())
                .isInstanceOf(InternalError.class));
        assertThat(later.events).singleElement().isInstanceOf(WorkerFailedException.class);
        assertThat(sender.group.failure()).contains("for good");
        assertThat(failing.isClosed()).isTrue();
        assertThat(sender.nic(0)).as("not reopened").isSameAs(failing);
    }

    @Test
    void anImmBeyondTheBoundOfUnexpectedValuesIsRefusedBeforeItsBytesLand() {
        final Side sender = new Side(1, 16);
        final Side receiver = new Side(1, 1);
        final MemorySegment dst = arena.allocate(4096);
        final RegionDescriptor dstDesc = receiver.register(dst).descriptor();
        final Region src = sender.register(pattern(4096));
        final TransferCounters first = new TransferCounters();
        final TransferCounters second = new TransferCounters();

        sender.submit(SingleWrite.of(src, 0, 16, dstDesc, 0).withImm(1), first);
        work(sender, receiver);
        sender.submit(SingleWrite.of(src, 0, 16, dstDesc, 100).withImm(2), second);
        work(sender, receiver);

        assertThat(first.done()).isEqualTo(1);
        assertThat(second.failed()).isEqualTo(1);
        assertThat(dst.get(ValueLayout.JAVA_BYTE, 100))
                .as("refused before placing")
                .isZero();
        assertThat(receiver.counters.counter(EngineCounter.IMMS_REFUSED)).isEqualTo(1);
        assertThat(receiver.imms.remove(1)).isEqualTo(new ImmCountState(1, 0));
    }

    /** Imm writes of distinct values from {@code sender}, one at a time; how many of them landed. */
    private static int distinctImmWrites(
            final Side sender,
            final Side receiver,
            final Region src,
            final RegionDescriptor dst,
            final int first,
            final int count) {
        final TransferCounters outcomes = new TransferCounters();
        for (int imm = first; imm < first + count; imm++) {
            sender.submit(SingleWrite.of(src, 0, 8, dst, 0).withImm(imm), outcomes);
            work(sender, receiver);
        }
        assertThat(outcomes.done() + outcomes.failed()).isEqualTo(count);
        return (int) outcomes.done();
    }

    @Test
    void aPeerFillingTheUnexpectedImmBoundLeavesAnotherPeerItsShare() {
        final Side attacker = new Side(1, 64);
        final Side member = new Side(1, 64);
        final Side receiver = new Side(1, 12);
        final RegionDescriptor dst = receiver.register(arena.allocate(4096)).descriptor();

        // alone, a peer holds at most half the bound, so that room stays for the next
        assertThat(distinctImmWrites(attacker, receiver, attacker.register(pattern(4096)), dst, 0, 12))
                .isEqualTo(6);
        assertThat(receiver.counters.counter(EngineCounter.IMMS_REFUSED)).isEqualTo(6);
        // the second peer's share is a third of the bound: every write within it lands
        assertThat(distinctImmWrites(member, receiver, member.register(pattern(4096)), dst, 100, 4))
                .isEqualTo(4);
        assertThat(receiver.counters.counter(EngineCounter.IMMS_REFUSED)).isEqualTo(6);
        assertThat(receiver.imms.remove(103)).isEqualTo(new ImmCountState(1, 0));
        assertThat(receiver.imms.placesHeld()).isEqualTo(9);
    }

    @Test
    void unclaimedCreditsExpireAfterTheirTimeToLiveAndTheirPlacesAreFreeAgain() {
        final Side attacker = new Side(1, 64);
        final Side receiver = new Side(1, 12);
        final RegionDescriptor dst = receiver.register(arena.allocate(4096)).descriptor();
        final Region src = attacker.register(pattern(4096));
        assertThat(distinctImmWrites(attacker, receiver, src, dst, 0, 7)).isEqualTo(6);
        final PolledImmCounter claimed = receiver.imms.counter(3);
        final long ttl = TransferEngine.builder().config().unexpectedImmTtl().toNanos();

        now += ttl - 1;
        work(receiver);
        assertThat(receiver.counters.counter(EngineCounter.IMMS_EXPIRED)).isZero();
        now += ttl / 8 + 1; // the sweep runs every eighth of the time to live
        work(receiver);

        assertThat(receiver.counters.counter(EngineCounter.IMMS_EXPIRED))
                .as("the five values nobody claimed, one imm each")
                .isEqualTo(5);
        assertThat(claimed.balance()).as("a claimed value does not expire").isEqualTo(1);
        assertThat(receiver.imms.placesHeld()).isZero();
        assertThat(distinctImmWrites(attacker, receiver, src, dst, 20, 6)).isEqualTo(6);
    }

    @Test
    void rekeyingRefusesWritesWithTheOldKeysAndLeavesTheMemoryUntouched() {
        final Side sender = new Side(1, 16);
        final Side receiver = new Side(1, 16);
        final MemorySegment dst = arena.allocate(4096);
        final Region dstRegion = receiver.register(dst);
        final RegionDescriptor old = dstRegion.descriptor();
        final Region src = sender.register(pattern(4096));

        final RegionDescriptor fresh = receiver.group.resources().rekey(dstRegion);
        final Outcome withOldKey = new Outcome();
        final TransferCounters withNewKey = new TransferCounters();
        sender.submit(SingleWrite.of(src, 0, 4096, old, 0), withOldKey);
        work(sender, receiver);
        sender.runCallbacks();

        assertThat(fresh).isEqualTo(dstRegion.descriptor()).isNotEqualTo(old);
        assertThat(withOldKey.events).singleElement().isInstanceOf(RemoteAccessException.class);
        assertThat(MemorySegment.mismatch(dst, 0, 4096, arena.allocate(4096), 0, 4096))
                .isEqualTo(-1);
        sender.submit(SingleWrite.of(src, 0, 4096, fresh, 0), withNewKey);
        work(sender, receiver);
        assertThat(withNewKey.done()).isEqualTo(1);
    }

    @Test
    void aThrowingCallbackIsCountedAndLaterCallbacksStillRun() {
        final Side side = new Side(1, 16);
        final List<String> ran = new ArrayList<>();
        side.callbacks.dispatch(() -> {
            throw new StackOverflowError("injected");
        });
        side.callbacks.dispatch(() -> ran.add("next"));

        side.runCallbacks();

        assertThat(side.counters.counter(EngineCounter.CALLBACK_ERRORS)).isEqualTo(1);
        assertThat(ran).containsExactly("next");
    }
}
