package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.EngineCounter;
import dev.transferengine.ImmCountState;
import dev.transferengine.ImmCounter;
import dev.transferengine.ImmTrigger;
import dev.transferengine.ImmWrite;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleWrite;
import dev.transferengine.SubmitStatus;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferListener;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.test.HoldingDomain;
import dev.transferengine.test.HoldingTransport;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The imm table's trigger entry and its firing, on tcp engines over loopback: a client writes imm {@link #PING} to a
 * server whose trigger answers with imm {@link #PONG}.
 */
class ImmTriggersTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int PING = 7;
    private static final int PONG = 8;

    private final Arena arena = Arena.ofShared();
    private final TransferEngine client = EngineTest.tcp();
    private final TransferEngine server = EngineTest.tcp();
    private final RegionDescriptor clientRegion = region(client).descriptor();
    private final RegionDescriptor serverRegion = region(server).descriptor();

    @AfterEach
    void close() {
        client.close();
        server.close();
        arena.close();
    }

    private MemoryRegion region(final TransferEngine engine) {
        return engine.register(arena.allocate(4096, 4096), Device.host());
    }

    /** Pings the server {@code count} times and waits until it counted every imm it ever got. */
    private void ping(final int count) {
        final long before = server.metrics().counter(EngineCounter.IMM_EVENTS);
        final TransferCounters pings = new TransferCounters();
        for (int i = 0; i < count; i++) {
            client.submit(ImmWrite.of(serverRegion, PING), pings);
        }
        pings.awaitCompleted(count, WAIT);
        assertThat(pings.done()).isEqualTo(count);
        await().atMost(WAIT).until(() -> server.metrics().counter(EngineCounter.IMM_EVENTS) == before + count);
    }

    /**
     * Removes the PING entry, armed with {@code expected}, and checks that {@code left} imms were counted toward its
     * next firing: those it held, plus any credited after the removal (a worker counts an imm event a moment before
     * it credits the imm, so the last of {@link #ping} may land either side of the removal).
     */
    private void assertLeftOver(final long left, final int expected) {
        final ImmCountState state = Objects.requireNonNull(server.removeImmCount(PING), "the trigger's state");
        assertThat(state.expected()).isEqualTo(expected);
        final ImmCounter later = server.immCounter(PING);
        await().atMost(WAIT).until(() -> state.count() + later.balance() == left);
    }

    @Test
    void firesOncePerCountAndKeepsTheImmsCountedTowardTheNextFiring() {
        final ImmCounter pongs = client.immCounter(PONG);
        final ImmTrigger trigger =
                server.triggerOnImm(PING, 3, ImmWrite.of(clientRegion, PONG), new TransferCounters());

        ping(8);

        pongs.await(2, WAIT);
        assertThat(trigger.fired()).isEqualTo(2);
        assertThat(trigger.imm()).isEqualTo(PING);
        assertThat(trigger.count()).isEqualTo(3);
        assertLeftOver(2, 3);
    }

    @Test
    void creditsThatCameBeforeArmingFireItAtOnceOnTheArmingThread() {
        final ImmCounter early = server.immCounter(PING);
        ping(5);
        await().atMost(WAIT).until(() -> early.balance() == 5); // an imm is counted as an event before it is credited
        final ImmCounter pongs = client.immCounter(PONG);

        final ImmTrigger trigger =
                server.triggerOnImm(PING, 2, ImmWrite.of(clientRegion, PONG), new TransferCounters());

        assertThat(trigger.fired()).as("fired before triggerOnImm returned").isEqualTo(2);
        pongs.await(2, WAIT);
        assertThat(server.removeImmCount(PING)).isEqualTo(new ImmCountState(1, 2));
    }

    @Test
    void closingDisarmsItAndTheImmsItCountedStayCredited() {
        final ImmTrigger trigger =
                server.triggerOnImm(PING, 5, ImmWrite.of(clientRegion, PONG), new TransferCounters());
        ping(3);

        trigger.close();
        trigger.close(); // idempotent
        ping(1);

        assertThat(trigger.fired()).isZero();
        server.immCounter(PING).await(4, WAIT);
        assertThat(server.removeImmCount(PING)).isEqualTo(new ImmCountState(0, 0));
    }

    @Test
    void aReplacedTriggerClosesNothingButItself() {
        final ImmTrigger first = server.triggerOnImm(PING, 4, ImmWrite.of(clientRegion, PONG), new TransferCounters());
        ping(1);
        final ImmCounter pongs = client.immCounter(PONG);
        final ImmTrigger second = server.triggerOnImm(PING, 2, ImmWrite.of(clientRegion, PONG), new TransferCounters());

        first.close();
        ping(1);

        pongs.await(1, WAIT);
        assertThat(first.fired()).isZero();
        assertThat(second.fired()).as("the first's credit carried over").isEqualTo(1);
        assertThat(server.removeImmCount(PING)).isEqualTo(new ImmCountState(0, 2));
    }

    @Test
    void aNegativeAcknowledgementForItsImmLeavesItArmed() {
        final ImmCounter pongs = client.immCounter(PONG);
        final ImmTrigger trigger =
                server.triggerOnImm(PING, 1, ImmWrite.of(clientRegion, PONG), new TransferCounters());
        final MemoryRegion gone = region(server);
        final RegionDescriptor stale = gone.descriptor();
        server.deregister(gone);
        final MemoryRegion source = region(client);

        final CompletableFuture<Void> refused =
                client.submit(SingleWrite.of(source, 0, 16, stale, 0).withImm(PING));

        assertThat(refused).failsWithin(WAIT);
        await().atMost(WAIT).until(() -> server.metrics().counter(EngineCounter.IMMS_ABANDONED) == 1);
        ping(1);
        pongs.await(1, WAIT);
        assertThat(trigger.fired()).isEqualTo(1);
        assertThat(server.removeImmCount(PING)).isEqualTo(new ImmCountState(0, 1));
    }

    @Test
    void aFiringWhoseRegionWasDeregisteredFailsThroughTheListenerAndTheTriggerStaysArmed() throws Exception {
        final MemoryRegion source = region(server);
        final FirstOutcome outcome = new FirstOutcome();
        final ImmTrigger trigger = server.triggerOnImm(
                PING, 1, SingleWrite.of(source, 0, 16, clientRegion, 0).withImm(PONG), outcome);
        server.deregister(source);

        ping(1);

        assertThat(outcome.error()).isInstanceOf(InvalidRequestException.class).hasMessageContaining("deregistered");
        assertThat(trigger.fired()).isEqualTo(1);
        assertThat(server.metrics().counter(EngineCounter.WORKER_ERRORS)).isZero();
        assertThat(server.removeImmCount(PING)).isEqualTo(new ImmCountState(0, 1));
    }

    @Test
    void aFiringTheFullQueueRefusesFailsWithBackPressureAndIsCounted() throws Exception {
        try (TransferEngine held = TransferEngine.builder()
                .transport(HoldingTransport.NAME)
                .option(HoldingTransport.WRAPPED, "tcp")
                .maxInFlight(1)
                .submitQueueCapacity(1)
                .drainTimeout(Duration.ofSeconds(2))
                .build()) {
            final RegionDescriptor heldRegion = region(held).descriptor();
            final ImmCounter early = held.immCounter(PING);
            client.submit(ImmWrite.of(heldRegion, PING)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            await().atMost(WAIT).until(() -> early.balance() == 1);
            HoldingDomain.at(held.mainAddress()).hold(true);
            final TransferCounters queued = new TransferCounters();
            final AtomicInteger accepted = new AtomicInteger();
            // one request in flight (held) and one queued: only then is the queue full for good
            await().atMost(WAIT).until(() -> {
                if (held.trySubmit(ImmWrite.of(clientRegion, 1), queued) == SubmitStatus.ACCEPTED) {
                    accepted.incrementAndGet();
                }
                return accepted.get() == 2;
            });
            assertThat(held.trySubmit(ImmWrite.of(clientRegion, 1), queued)).isEqualTo(SubmitStatus.BACK_PRESSURED);
            final long refusedBefore = held.metrics().counter(EngineCounter.BACK_PRESSURE);
            final FirstOutcome outcome = new FirstOutcome();

            final ImmTrigger trigger = held.triggerOnImm(PING, 1, ImmWrite.of(clientRegion, PONG), outcome);

            assertThat(outcome.error()).isInstanceOf(BackPressureException.class);
            assertThat(trigger.fired()).isEqualTo(1);
            assertThat(held.metrics().counter(EngineCounter.BACK_PRESSURE)).isEqualTo(refusedBefore + 1);
            HoldingDomain.at(held.mainAddress()).hold(false);
            queued.awaitCompleted(accepted.get(), WAIT);

            final ImmCounter pongs = client.immCounter(PONG);
            client.submit(ImmWrite.of(heldRegion, PING)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            pongs.await(1, WAIT);
            assertThat(trigger.fired())
                    .as("still armed after the refused firing")
                    .isEqualTo(2);
        }
    }

    @Test
    void aLoopAcrossTwoEnginesRunsUntilOneSideClosesItsTrigger() throws InterruptedException {
        final ImmTrigger serverSide =
                server.triggerOnImm(PING, 1, ImmWrite.of(clientRegion, PONG), new TransferCounters());
        final ImmTrigger clientSide =
                client.triggerOnImm(PONG, 1, ImmWrite.of(serverRegion, PING), new TransferCounters());

        final TransferCounters kick = new TransferCounters();
        client.submit(ImmWrite.of(serverRegion, PING), kick);
        await().atMost(WAIT).until(() -> clientSide.fired() >= 100);
        clientSide.close();

        // one token circulates: the PONG that finds the client's trigger closed stays there as a credit, and an
        // expectation armed now replaces that credit (or nothing), not a trigger still armed
        final CountDownLatch lastPong = new CountDownLatch(1);
        final ImmCountState replaced = client.expectImmCount(PONG, 1, imm -> {
            lastPong.countDown();
            return false;
        });
        assertThat(replaced == null ? 0 : replaced.expected())
                .as("the closed trigger is no longer armed")
                .isZero();
        assertThat(lastPong.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        // the server fired once per PING: the first, then one per client firing
        assertThat(serverSide.fired()).isEqualTo(clientSide.fired() + 1);
    }

    @Test
    @SuppressWarnings("NullAway") // the nulls are the point: callers outside NullAway's reach pass them
    void armingChecksItsArgumentsAsSubmitDoes() {
        final ImmWrite pong = ImmWrite.of(clientRegion, PONG);
        final TransferCounters counters = new TransferCounters();
        assertThatThrownBy(() -> server.triggerOnImm(PING, 0, pong, counters))
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("count must be >= 1, was 0");
        assertThatThrownBy(() -> server.triggerOnImm(PING, 1, null, counters))
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("request");
        assertThatThrownBy(() -> server.triggerOnImm(PING, 1, pong, (TransferListener) null))
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("listener");
        assertThatThrownBy(() -> server.triggerOnImm(PING, 1, pong, (TransferCounters) null))
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("counters");
        final MemoryRegion foreign = region(client);
        assertThatThrownBy(
                        () -> server.triggerOnImm(PING, 1, SingleWrite.of(foreign, 0, 16, clientRegion, 0), counters))
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("not registered with this engine");
        assertThatThrownBy(() -> server.triggerOnImm(PING, 1, ImmWrite.of(serverRegion, PING), counters))
                .as("a trigger whose request lands its own imm here again")
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("would fire itself at every landing");
        assertThat(server.removeImmCount(PING)).as("nothing was armed").isNull();
        final ImmTrigger relay = server.triggerOnImm(PING, 1, ImmWrite.of(serverRegion, PONG), counters);
        assertThat(relay.imm())
                .as("another imm to itself is a relay, not a loop")
                .isEqualTo(PING);
        server.close();
        assertThatThrownBy(() -> server.triggerOnImm(PING, 1, pong, counters))
                .isInstanceOf(EngineClosedException.class);
    }

    /** The first outcome a trigger's listener is told of. */
    private static final class FirstOutcome implements TransferListener {
        private final CompletableFuture<TransferEngineException> outcome = new CompletableFuture<>();

        @Override
        public void onDone() {
            outcome.complete(null);
        }

        @Override
        public void onError(final TransferEngineException error) {
            outcome.complete(error);
        }

        TransferEngineException error() throws Exception {
            return outcome.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
    }
}
