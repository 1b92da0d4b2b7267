package dev.transferengine.transport.fabric;

import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pool sizes between fabric domains ({@link FabricPoolSizes}), driven from the test thread: what a sender does
 * when its peer does not answer, and what a receiver does with a buffer a message was truncated into.
 */
class FabricPoolSizesTest {

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofConfined();

    @AfterEach
    void close() {
        fixture.close();
        arena.close();
    }

    /**
     * A peer that never answers the sender's questions (an engine from before the pool sizes; here one that is not
     * polled) is sent to by the message's length once the sender gave up asking: the send that was held for the
     * answer goes, neither failed nor dropped, and lands once the peer runs. The sender alone is polled for longer
     * than its questions last (real time, as its retries are); had it not given up by then, the peer's late answer
     * would release the send the same way, so this checks what giving up does, not when. The peer, polled after
     * some 3 s, finds more questions than control buffers: with libfabric 2.1's tcp;ofi_rxm it died in
     * {@code fi_av_insert} (SIGSEGV in {@code rxm_get_addr}) resolving their sender, until the engine asked RxM for
     * FI_DIRECTED_RECV (docs/delivery-contract.md).
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void aSendHeldForAPeerThatNeverAnswersGoesByItsLengthOnceTheSenderGaveUpAsking(final String provider) {
        FabricFixture.assumeAvailable(provider);
        final RecordingDomainListener senderEvents = new RecordingDomainListener();
        final RecordingDomainListener receiverEvents = new RecordingDomainListener();
        final Domain sender = fixture.open(provider, 0, senderEvents);
        final Domain receiver = fixture.open(provider, 0, receiverEvents);
        final MemorySegment buffer = arena.allocate(1000, 64);
        receiver.postReceive(100, buffer);
        final MemorySegment message = filled(700, 7);

        sender.send(200, sender.resolve(receiver.address()), message);
        final long questionsEnd = System.nanoTime() + questionsNanos() + TimeUnit.SECONDS.toNanos(1);
        while (System.nanoTime() - questionsEnd < 0) {
            sender.poll(); // nobody answers
        }
        fixture.pollUntil(() -> receiverEvents.receives.containsKey(100L) && senderEvents.completed.containsKey(200L));

        assertThat(senderEvents.failed).isEmpty();
        assertThat(receiverEvents.receives).containsEntry(100L, 700);
        assertThat(MemorySegment.mismatch(buffer, 0, 700, message, 0, 700)).isEqualTo(-1);
    }

    /** How long a sender asks a peer for its sizes before it gives up: the waits after each of its questions. */
    private static long questionsNanos() {
        long nanos = 0;
        for (int attempt = 1; attempt <= FabricControl.ATTEMPTS; attempt++) {
            nanos += FabricControl.retryDelayNanos(attempt);
        }
        return nanos;
    }

    /**
     * The one window the pool sizes leave (docs/delivery-contract.md): a receiver posts a buffer smaller than the
     * sizes it told a sender, and the sender sends before it heard of it. The provider cuts the message into that
     * buffer ({@code FI_ETRUNC}); the receiver never delivers it, and posts the buffer again, so its pool keeps every
     * buffer: the next message that fits lands in it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void aBufferAMessageWasTruncatedIntoIsPostedAgainAndTakesTheNextMessage(final String provider) {
        FabricFixture.assumeAvailable(provider);
        Assumptions.assumeFalse(
                provider.equals("tcp") && FabricTestAccess.libraryVersion().startsWith("1."),
                "libfabric 1.x's tcp;ofi_rxm (1.17 here) reports the truncation (prov_errno 2), and the buffer posted"
                        + " again never takes the next message, which its sender saw done: not investigated further");
        final RecordingDomainListener senderEvents = new RecordingDomainListener();
        final RecordingDomainListener receiverEvents = new RecordingDomainListener();
        final Domain sender = fixture.open(provider, 0, senderEvents);
        final Domain receiver = fixture.open(provider, 0, receiverEvents);
        final long peer = sender.resolve(receiver.address());
        receiver.postReceive(1, arena.allocate(1000, 64));
        sender.send(10, peer, filled(1000, 1));
        fixture.pollUntil(() -> receiverEvents.receives.containsKey(1L) && senderEvents.completed.containsKey(10L));

        // no poll between the two: the sender has not heard of the 600-byte buffer and tags 900 bytes for the 1000
        final MemorySegment small = arena.allocate(600, 64);
        receiver.postReceive(2, small);
        sender.send(11, peer, filled(900, 2));
        fixture.pollUntil(() -> senderEvents.completed.containsKey(11L) || senderEvents.failed.containsKey(11L));
        final MemorySegment fits = filled(500, 3);
        sender.send(12, peer, fits);
        fixture.pollUntil(() -> receiverEvents.receives.containsKey(2L));

        assertThat(receiverEvents.receives).containsEntry(2L, 500).hasSize(2);
        assertThat(MemorySegment.mismatch(small, 0, 500, fits, 0, 500)).isEqualTo(-1);
        fixture.pollUntil(() -> senderEvents.completed.containsKey(12L));
    }

    /**
     * A receive pool closed (its buffers withdrawn) stops being advertised once no buffer of its size is left: the
     * receiver pushes its narrowed sizes, and a send only that pool took is refused at the sender at once, naming
     * the largest pool left, instead of waiting at the receiver for a buffer of its size.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void aClosedPoolStopsBeingAdvertisedAndASendOnlyItTookIsRefusedAtOnce(final String provider) {
        FabricFixture.assumeAvailable(provider);
        final RecordingDomainListener senderEvents = new RecordingDomainListener();
        final RecordingDomainListener receiverEvents = new RecordingDomainListener();
        final FabricDomain sender = (FabricDomain) fixture.open(provider, 0, senderEvents);
        final Domain receiver = fixture.open(provider, 0, receiverEvents);
        final long peer = sender.resolve(receiver.address());
        receiver.postReceive(1, arena.allocate(100, 64));
        receiver.postReceive(2, arena.allocate(3000, 64));
        sender.send(10, peer, filled(2000, 1));
        fixture.pollUntil(() -> receiverEvents.receives.containsKey(2L) && senderEvents.completed.containsKey(10L));

        receiver.withdrawReceive(2); // the 3000-byte pool closes (its one buffer is with the application)
        fixture.pollUntil(() ->
                FabricPoolSizes.tag(Objects.requireNonNull(sender.poolSizesOf(peer)), 2000) == FabricPoolSizes.REFUSED);
        sender.send(11, peer, filled(2000, 2));

        assertThat(senderEvents.failed.get(11L))
                .as("refused within the send, before any poll")
                .isInstanceOfSatisfying(RemoteAccessException.class, refused -> assertThat(refused.reason())
                        .isEqualTo(RemoteAccessException.Reason.NO_RECEIVE_BUFFER))
                .hasMessageContaining("a send of 2000 bytes")
                .hasMessageContaining("the largest was asked for 100 bytes");
        sender.send(12, peer, filled(100, 3));
        fixture.pollUntil(() -> receiverEvents.receives.containsKey(1L) && senderEvents.completed.containsKey(12L));
        assertThat(receiverEvents.receives).containsEntry(1L, 100).hasSize(2);
    }

    private MemorySegment filled(final int bytes, final int seed) {
        final MemorySegment segment = arena.allocate(bytes);
        segment.fill((byte) seed);
        return segment;
    }
}
