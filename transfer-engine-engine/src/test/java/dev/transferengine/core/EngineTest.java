package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleWrite;
import dev.transferengine.SubmitStatus;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferListener;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.InvalidConfigException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;
import dev.transferengine.test.HoldingDomain;
import dev.transferengine.test.HoldingTransport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The engine's own rules, independent of the transport: checked on tcp over loopback. */
class EngineTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final Arena arena = Arena.ofShared();

    @AfterEach
    void closeArena() {
        arena.close();
    }

    /** A tcp engine that drains briefly on close; for this package's tests. */
    static TransferEngine tcp() {
        return TransferEngine.builder()
                .transport("tcp")
                .drainTimeout(Duration.ofSeconds(2))
                .build();
    }

    @Test
    void readOnlyAndThreadConfinedSegmentsAreRefusedWithTheReason() {
        try (TransferEngine engine = tcp();
                Arena confined = Arena.ofConfined()) {
            assertThatThrownBy(() -> engine.register(arena.allocate(4096).asReadOnly(), Device.host()))
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("read-only");
            assertThatThrownBy(() -> engine.register(confined.allocate(4096), Device.host()))
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("confined");
            assertThat(engine.regions()).isEmpty();
        }
    }

    @Test
    @SuppressWarnings("NullAway") // the nulls are the point: callers outside NullAway's reach pass them
    void nullArgumentsAnOverlargeReceivePoolAndANegativeMaxInFlightAreRefusedWithTypedErrors() {
        assertThatThrownBy(() -> TransferEngine.builder().maxInFlight(-1))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("maxInFlight");
        try (TransferEngine engine = tcp()) {
            final MemoryRegion region = engine.register(arena.allocate(4096), Device.host());
            final SingleWrite write = SingleWrite.of(region, 0, 64, region.descriptor(), 0);
            final TransferListener noListener = null;
            final TransferCounters noCounters = null;
            assertThatThrownBy(() -> engine.submit(write, noListener))
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("listener must not be null");
            assertThatThrownBy(() -> engine.trySubmit(write, noListener))
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("listener must not be null");
            assertThatThrownBy(() -> engine.submit(write, noCounters))
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("counters must not be null");
            assertThatThrownBy(() -> engine.send(engine.mainAddress(), arena.allocate(8), noListener))
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("listener must not be null");
            assertThatThrownBy(() -> engine.postedReceivePool(64, 4, null))
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("listener must not be null");
            assertThatThrownBy(() -> engine.expectImmCount(7, 1, null))
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("listener must not be null");
            assertThatThrownBy(() -> engine.postedReceivePool(1 << 30, 4, message -> {}))
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("postedReceivePool of 1073741824 x 4");
            assertThatThrownBy(() -> engine.creditedReceivePool(1 << 20, 2048, message -> {}))
                    .isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("exceeds");
            // nothing half-done: the engine still writes
            assertThat(engine.submit(write)).succeedsWithin(WAIT);
        }
    }

    @Test
    void closeFromACompletionListenerReturns() throws Exception {
        final TransferEngine sender = tcp();
        try (TransferEngine receiver = tcp()) {
            final MemoryRegion src = sender.register(arena.allocate(4096), Device.host());
            final RegionDescriptor dst =
                    receiver.register(arena.allocate(4096), Device.host()).descriptor();
            final CountDownLatch closed = new CountDownLatch(1);

            sender.submit(SingleWrite.of(src, 0, 4096, dst, 0), new TransferListener() {
                @Override
                public void onDone() {
                    sender.close();
                    closed.countDown();
                }

                @Override
                public void onError(final TransferEngineException error) {
                    sender.close();
                    closed.countDown();
                }
            });

            assertThat(closed.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .as("close() returned on the callback thread")
                    .isTrue();
            assertThat(sender.isHealthy()).isFalse();
            assertThatThrownBy(() -> sender.submit(SingleWrite.of(src, 0, 16, dst, 0)))
                    .isInstanceOf(EngineClosedException.class);
        }
    }

    @Test
    void trySubmitAnswersBackPressureAndClosedWithAStatusAndNothingIsLost() {
        final TransferEngine sender = TransferEngine.builder()
                .transport(HoldingTransport.NAME)
                .option(HoldingTransport.WRAPPED, "tcp")
                .maxInFlight(1)
                .submitQueueCapacity(1)
                .drainTimeout(Duration.ofSeconds(2))
                .build();
        try (TransferEngine receiver = tcp()) {
            final MemoryRegion src = sender.register(arena.allocate(4096), Device.host());
            final RegionDescriptor dst =
                    receiver.register(arena.allocate(4096), Device.host()).descriptor();
            final HoldingDomain nic = HoldingDomain.at(sender.mainAddress());
            nic.hold(true);
            final TransferCounters counters = new TransferCounters();

            int accepted = 0;
            SubmitStatus status = SubmitStatus.ACCEPTED;
            // one request in flight (held), at most one queued: the third cannot be taken
            for (int i = 0; i < 3 && status == SubmitStatus.ACCEPTED; i++) {
                status = sender.trySubmit(SingleWrite.of(src, 0, 4096, dst, 0), counters);
                accepted += status == SubmitStatus.ACCEPTED ? 1 : 0;
            }
            final BackPressureException first = catchBackPressure(sender, src, dst);
            final BackPressureException second = catchBackPressure(sender, src, dst);
            nic.hold(false);

            assertThat(status).isEqualTo(SubmitStatus.BACK_PRESSURED);
            assertThat(first).as("one stackless instance").isSameAs(second);
            assertThat(first.getStackTrace()).isEmpty();
            counters.awaitCompleted(accepted, WAIT);
            assertThat(counters.done()).isEqualTo(accepted);
            sender.close();
            assertThat(sender.trySubmit(SingleWrite.of(src, 0, 4096, dst, 0), counters))
                    .isEqualTo(SubmitStatus.CLOSED);
            assertThat(counters.completed()).isEqualTo(accepted);
        } finally {
            sender.close();
        }
    }

    /** Submits until the full queue refuses, which it does at once while the only slot is held. */
    private static BackPressureException catchBackPressure(
            final TransferEngine sender, final MemoryRegion src, final RegionDescriptor dst) {
        final TransferCounters ignored = new TransferCounters();
        await().atMost(WAIT)
                .until(() ->
                        sender.trySubmit(SingleWrite.of(src, 0, 16, dst, 0), ignored) == SubmitStatus.BACK_PRESSURED);
        try {
            sender.submit(SingleWrite.of(src, 0, 16, dst, 0), ignored);
        } catch (final BackPressureException e) {
            return e;
        }
        throw new AssertionError("the full queue accepted a submission");
    }

    /**
     * The deadline is the submission's plus the operation timeout, even where the worker takes the write after it
     * passed (a loaded host; issue 21): a clock that reads 0 on the submitting thread and the operation timeout plus
     * 1 s on every other stands for a worker that took the write that late.
     */
    @Test
    void aWriteTakenByTheWorkerAfterItsDeadlineTimesOut() {
        final Duration timeout = Duration.ofSeconds(20);
        final Thread submitter = Thread.currentThread();
        final long workerTime = timeout.plusSeconds(1).toNanos();
        final TransferEngine sender = TransferEngine.builder()
                .transport(HoldingTransport.NAME)
                .option(HoldingTransport.WRAPPED, "tcp")
                .operationTimeout(timeout)
                .drainTimeout(Duration.ofSeconds(2))
                .clock(() -> Thread.currentThread() == submitter ? 0 : workerTime)
                .build();
        try (sender;
                TransferEngine receiver = tcp()) {
            final MemoryRegion src = sender.register(arena.allocate(4096), Device.host());
            final RegionDescriptor dst =
                    receiver.register(arena.allocate(4096), Device.host()).descriptor();
            HoldingDomain.at(sender.mainAddress()).hold(true);

            assertThat(sender.submit(SingleWrite.of(src, 0, 4096, dst, 0)))
                    .failsWithin(WAIT)
                    .withThrowableOfType(ExecutionException.class)
                    .havingCause()
                    .isInstanceOf(TransferTimeoutException.class);
        }
    }

    @Test
    void segmentsOfAnotherArenaKindStillRegister() {
        try (TransferEngine engine = tcp()) {
            final MemorySegment global = Arena.ofAuto().allocate(64);
            assertThat(engine.register(global, Device.host()).isRegistered()).isTrue();
        }
    }
}
