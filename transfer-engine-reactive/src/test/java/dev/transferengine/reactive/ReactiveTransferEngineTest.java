package dev.transferengine.reactive;

import dev.transferengine.Device;
import dev.transferengine.EngineCounter;
import dev.transferengine.ImmCountState;
import dev.transferengine.ImmWrite;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionAccess;
import dev.transferengine.SingleRead;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.RegionBoundsException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Two real tcp engines on loopback, driven through the reactive facade. */
class ReactiveTransferEngineTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int REGION = 64 * 1024;

    private final List<TransferEngine> engines = new ArrayList<>();
    private final Arena arena = Arena.ofShared();
    private ReactiveTransferEngine sender;
    private ReactiveTransferEngine receiver;
    private MemoryRegion source;
    private MemoryRegion target;

    @BeforeEach
    void startEngines() {
        sender = new ReactiveTransferEngine(engine());
        receiver = new ReactiveTransferEngine(
                engine(), ReactiveOptions.DEFAULTS.withReceivePoolSize(4).withReceiveBufferSize(1024));
        final MemorySegment bytes = arena.allocate(REGION, 4096);
        for (int i = 0; i < REGION; i++) {
            bytes.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 3));
        }
        source = sender.engine().register(bytes, Device.host());
        target = receiver.engine().register(arena.allocate(REGION, 4096), Device.host());
    }

    @AfterEach
    void closeEngines() {
        engines.forEach(TransferEngine::close);
        arena.close();
    }

    private TransferEngine engine() {
        final TransferEngine engine = TransferEngine.builder()
                .transport("tcp")
                .operationTimeout(Duration.ofSeconds(20))
                .drainTimeout(Duration.ofSeconds(1))
                .build();
        engines.add(engine);
        return engine;
    }

    /** The pool is posted on a bounded-elastic thread after subscription; wait until all its buffers are out. */
    private void awaitPosted(final int buffers) {
        await().atMost(WAIT).until(() -> receiver.postedReceives() == buffers);
    }

    @Test
    void writeIsPostedOnlyWhenSubscribedAndOncePerSubscription() {
        final Mono<Void> write = sender.write(ImmWrite.of(target.descriptor(), 11));
        assertThat(sender.engine().metrics().counter(EngineCounter.REQUESTS_SUBMITTED))
                .isZero();

        StepVerifier.create(write).expectComplete().verify(WAIT);
        StepVerifier.create(write).expectComplete().verify(WAIT);

        assertThat(sender.engine().metrics().counter(EngineCounter.REQUESTS_SUBMITTED))
                .isEqualTo(2);
        StepVerifier.create(receiver.expectImm(11, 2)).expectComplete().verify(WAIT);
    }

    @Test
    void writeCompletesOnceTheBytesAreInTheRemoteRegion() {
        final SingleWrite write =
                SingleWrite.of(source, 128, 8192, target.descriptor(), 256).withImm(12);

        StepVerifier.create(sender.write(write).then(receiver.expectImm(12, 1)))
                .expectComplete()
                .verify(WAIT);

        assertThat(target.segment().asSlice(256, 8192).toArray(ValueLayout.JAVA_BYTE))
                .isEqualTo(source.segment().asSlice(128, 8192).toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void readPullsTheBytesOnSubscribeAndAnImmWriteAfterItTellsThePeer() {
        final SingleRead read = SingleRead.of(source.descriptor(), 64, 8192, target, 512);
        final Mono<Void> pull = receiver.read(read).then(receiver.write(ImmWrite.of(source.descriptor(), 14)));
        assertThat(receiver.engine().metrics().counter(EngineCounter.REQUESTS_SUBMITTED))
                .isZero();

        StepVerifier.create(pull.then(sender.expectImm(14, 1))).expectComplete().verify(WAIT);

        assertThat(target.segment().asSlice(512, 8192).toArray(ValueLayout.JAVA_BYTE))
                .isEqualTo(source.segment().asSlice(64, 8192).toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void readOfAWriteOnlyRegionFailsWithRemoteAccessException() {
        final MemoryRegion writeOnly =
                sender.engine().register(arena.allocate(4096, 4096), Device.host(), RegionAccess.WRITE_ONLY);

        StepVerifier.create(receiver.read(SingleRead.of(writeOnly.descriptor(), 0, 16, target, 0)))
                .expectError(RemoteAccessException.class)
                .verify(WAIT);
    }

    @Test
    void writeSignalsOnANonBlockingEngineThread() {
        final Mono<Boolean> onEngineThread = sender.write(ImmWrite.of(target.descriptor(), 13))
                .then(Mono.fromCallable(Schedulers::isInNonBlockingThread));

        StepVerifier.create(onEngineThread).expectNext(true).expectComplete().verify(WAIT);
    }

    @Test
    void writeOutsideTheSourceRegionFailsWithRegionBoundsException() {
        final SingleWrite write = SingleWrite.of(source, REGION - 10, 100, target.descriptor(), 0);

        StepVerifier.create(sender.write(write))
                .expectError(RegionBoundsException.class)
                .verify(WAIT);
    }

    @Test
    void writeOnAClosedEngineFailsWithEngineClosedException() {
        final Mono<Void> write = sender.write(ImmWrite.of(target.descriptor(), 14));
        sender.engine().close();

        StepVerifier.create(write).expectError(EngineClosedException.class).verify(WAIT);
    }

    @Test
    void expectImmCountsImmsThatArrivedBeforeTheSubscription() {
        StepVerifier.create(sender.write(ImmWrite.of(target.descriptor(), 21))
                        .then(sender.write(ImmWrite.of(target.descriptor(), 21))))
                .expectComplete()
                .verify(WAIT);

        StepVerifier.create(receiver.expectImm(21, 2)).expectComplete().verify(WAIT);
    }

    @Test
    void expectImmTimesOutWithTransferTimeoutExceptionAndKeepsTheImmsCountedSoFar() {
        StepVerifier.create(sender.write(ImmWrite.of(target.descriptor(), 22)))
                .expectComplete()
                .verify(WAIT);

        StepVerifier.create(receiver.expectImm(22, 2, Duration.ofMillis(50)))
                .expectErrorSatisfies(error -> assertThat(error)
                        .isInstanceOf(TransferTimeoutException.class)
                        .hasMessageContaining("imm 22"))
                .verify(WAIT);

        StepVerifier.create(sender.write(ImmWrite.of(target.descriptor(), 22)).then(receiver.expectImm(22, 2)))
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void aWriteWhoseMonoIsCancelledBeforeItIsPostedIsNeverPostedAndEndsInTheEngine() {
        final SingleWrite write =
                SingleWrite.of(source, 0, 4096, target.descriptor(), 0).withImm(24);

        sender.write(write).subscribe(new BaseSubscriber<Void>() {
            @Override
            protected void hookOnSubscribe(final Subscription subscription) {
                cancel(); // before the Mono's write reached the worker
            }
        });

        await().atMost(WAIT).until(() -> sender.engine().metrics().counter(EngineCounter.REQUESTS_FAILED) == 1);
        StepVerifier.create(sender.write(ImmWrite.of(target.descriptor(), 25)).then(receiver.expectImm(25, 1)))
                .expectComplete()
                .verify(WAIT);
        assertThat(target.segment().asSlice(0, 4096).toArray(ValueLayout.JAVA_BYTE))
                .as("the cancelled write never left")
                .containsOnly((byte) 0);
        assertThat(receiver.engine().metrics().counter(EngineCounter.IMM_EVENTS))
                .isEqualTo(1);
    }

    @Test
    void cancellingExpectImmWithdrawsTheExpectation() {
        StepVerifier.create(receiver.expectImm(23, 1)).thenCancel().verify(WAIT);

        assertThat(receiver.engine().removeImmCount(23)).isNotNull().satisfies(state -> assertThat(state.expected())
                .isZero());
    }

    @Test
    void expectImmOfNoImmsFailsWithInvalidRequestException() {
        StepVerifier.create(receiver.expectImm(25, 0))
                .expectError(InvalidRequestException.class)
                .verify(WAIT);
    }

    @Test
    void expectImmIsColdAndArmsNothingBeforeSubscription() {
        receiver.expectImm(24, 1);

        assertThat(receiver.engine().removeImmCount(24)).isNull();
    }

    @Test
    void sendIsPostedPerSubscriptionAndEachMessageArrivesAsACopy() {
        final Mono<Void> send = sender.send(receiver.engine().mainAddress(), "hello".getBytes(StandardCharsets.UTF_8));
        final Flux<String> received =
                receiver.receive().map(message -> new String(message.toByteArray(), StandardCharsets.UTF_8));

        StepVerifier.create(received.take(2))
                .then(() -> awaitPosted(2))
                .then(() ->
                        StepVerifier.create(send.then(send)).expectComplete().verify(WAIT))
                .expectNext("hello", "hello")
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void receivePostsNoMoreBuffersThanThePoolAndReleasesThemOnCancel() {
        StepVerifier.create(receiver.receive(), 0)
                .thenRequest(100)
                .then(() -> awaitPosted(4))
                .thenCancel()
                .verify(WAIT);

        assertThat(receiver.postedReceives()).isZero();
    }

    @Test
    void demandBecomesReceiveCreditSoSendsBeyondItAreRefused() {
        final Mono<Void> send = sender.send(receiver.engine().mainAddress(), new byte[] {7});

        StepVerifier.create(
                        receiver.receive()
                                .map(message -> (int) message.asByteBuffer().get(0)),
                        0)
                .then(() -> StepVerifier.create(send)
                        .expectError(RemoteAccessException.class)
                        .verify(WAIT))
                .thenRequest(2)
                .then(() -> awaitPosted(2))
                .then(() ->
                        StepVerifier.create(send.then(send)).expectComplete().verify(WAIT))
                .expectNext(7, 7)
                .then(() -> StepVerifier.create(send)
                        .expectError(RemoteAccessException.class)
                        .verify(WAIT))
                .thenCancel()
                .verify(WAIT);
    }

    @Test
    void unexpectedImmsAreStreamedToEverySubscriber() {
        final Flux<Integer> imms = receiver.unexpectedImms();

        StepVerifier.create(imms.take(1))
                .then(() -> StepVerifier.create(sender.write(ImmWrite.of(target.descriptor(), 31)))
                        .expectComplete()
                        .verify(WAIT))
                .expectNext(31)
                .expectComplete()
                .verify(WAIT);
    }

    private void writeImms(final int imm, final int times) {
        for (int i = 0; i < times; i++) {
            StepVerifier.create(sender.write(ImmWrite.of(target.descriptor(), imm)))
                    .expectComplete()
                    .verify(WAIT);
        }
    }

    private void awaitImmEvents(final long events) {
        await().atMost(WAIT).until(() -> receiver.engine().metrics().counter(EngineCounter.IMM_EVENTS) >= events);
    }

    @Test
    void aTriggerAnswersEachImmFromTheWorkerAndCountsItsFiringsUntilCancelled() {
        final Flux<Long> arrivals = sender.immArrivals(52);
        final Flux<Long> replies = receiver.trigger(51, 1, ImmWrite.of(source.descriptor(), 52));
        assertThat(receiver.engine().removeImmCount(51))
                .as("cold: nothing armed before subscription")
                .isNull();

        StepVerifier.create(replies.take(3))
                .then(() -> writeImms(51, 3))
                .expectNext(1L, 2L, 3L)
                .expectComplete()
                .verify(WAIT);
        StepVerifier.create(arrivals.take(3))
                .expectNext(1L, 2L, 3L)
                .expectComplete()
                .verify(WAIT);
        writeImms(51, 1);
        // the imm event is counted before it is credited: wait for the credit itself (nothing is removed until then)
        assertThat(await().atMost(WAIT).until(() -> receiver.engine().removeImmCount(51), Objects::nonNull))
                .as("the trigger was disarmed with the subscription; the later imm is credited")
                .isEqualTo(new ImmCountState(1, 0));
    }

    @Test
    void aTriggerWhoseFiringFailsEndsWithThatError() {
        final MemoryRegion doomed = receiver.engine().register(arena.allocate(4096, 4096), Device.host());
        final Flux<Long> replies = receiver.trigger(53, 1, SingleWrite.of(doomed, 0, 16, source.descriptor(), 0));

        StepVerifier.create(replies)
                .then(() -> receiver.engine().deregister(doomed))
                .then(() -> writeImms(53, 1))
                .expectErrorSatisfies(error -> assertThat(error)
                        .isInstanceOf(InvalidRequestException.class)
                        .hasMessageContaining("deregistered"))
                .verify(WAIT);
    }

    @Test
    void aTriggerThatWouldFireItselfFailsAtSubscription() {
        StepVerifier.create(receiver.trigger(54, 1, ImmWrite.of(target.descriptor(), 54)))
                .expectErrorSatisfies(error -> assertThat(error)
                        .isInstanceOf(InvalidRequestException.class)
                        .hasMessageContaining("would fire itself"))
                .verify(WAIT);
    }

    @Test
    void immArrivalsIsColdAndEmitsCreditedImmsFirstThenLiveOnes() {
        final Flux<Long> arrivals = receiver.immArrivals(41);
        assertThat(receiver.engine().removeImmCount(41)).isNull();
        writeImms(41, 2);
        awaitImmEvents(2);

        StepVerifier.create(arrivals.take(3))
                .expectNext(1L, 2L)
                .then(() -> writeImms(41, 1))
                .expectNext(3L)
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void aSlowImmArrivalsSubscriberGetsEveryArrivalAsItsDemandAllows() {
        StepVerifier.create(receiver.immArrivals(42), 0)
                .then(() -> writeImms(42, 3))
                .then(() -> awaitImmEvents(3))
                .thenRequest(2)
                .expectNext(1L, 2L)
                .thenRequest(1)
                .expectNext(3L)
                .then(() -> writeImms(42, 2))
                .then(() -> awaitImmEvents(5))
                .thenRequest(5)
                .expectNext(4L, 5L)
                .thenCancel()
                .verify(WAIT);
    }

    @Test
    void immArrivalsClaimsItsValueSoUnexpectedImmsDoNotSeeIt() {
        StepVerifier.create(receiver.unexpectedImms().take(1))
                .then(() -> StepVerifier.create(receiver.immArrivals(44).take(1), 0)
                        .then(() -> writeImms(44, 1))
                        .then(() -> writeImms(45, 1))
                        .thenRequest(1)
                        .expectNext(1L)
                        .expectComplete()
                        .verify(WAIT))
                .expectNext(45)
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void cancellingImmArrivalsKeepsTheArrivalsNotYetEmitted() {
        StepVerifier.create(receiver.immArrivals(43).take(1))
                .then(() -> writeImms(43, 2))
                .expectNext(1L)
                .expectComplete()
                .verify(WAIT);

        StepVerifier.create(receiver.expectImm(43, 1)).expectComplete().verify(WAIT);
    }

    @Test
    void aSecondImmArrivalsSubscriptionForTheSameValueFailsWithInvalidRequestException() {
        final Flux<Long> arrivals = receiver.immArrivals(46);

        StepVerifier.create(arrivals)
                .then(() -> StepVerifier.create(arrivals)
                        .expectErrorSatisfies(error -> assertThat(error)
                                .isInstanceOf(InvalidRequestException.class)
                                .hasMessageContaining("imm 46"))
                        .verify(WAIT))
                .thenCancel()
                .verify(WAIT);

        StepVerifier.create(arrivals.take(1))
                .then(() -> writeImms(46, 1))
                .expectNext(1L)
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void immArrivalsOnAClosedEngineFailsWithEngineClosedException() {
        receiver.engine().close();

        StepVerifier.create(receiver.immArrivals(47))
                .expectError(EngineClosedException.class)
                .verify(WAIT);
    }

    @Test
    void registerRunsOffTheCallerAndYieldsARegisteredRegion() {
        StepVerifier.create(sender.register(arena.allocate(4096, 4096), Device.host()))
                .assertNext(region -> assertThat(region.isRegistered()).isTrue())
                .expectComplete()
                .verify(WAIT);
    }
}
