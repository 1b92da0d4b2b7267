package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** Abandonments beyond the send buffers in flight wait in {@link FabricControl}'s backlog, coalesced by (peer, imm). */
class FabricControlBacklogTest {

    private static final NetworkAddress SELF = FabricAddress.of("tcp", new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
    private static final long PEER = 7;
    private static final long OTHER_PEER = 8;
    /** The receiver's region key every abandonment here names. */
    private static final long KEY = 0x1234;

    /** Takes every send buffer, as {@value FabricControl#SENDS} abandonments in flight do. */
    private static void fillSends(final FabricControl control) {
        for (int i = 0; i < FabricControl.SENDS; i++) {
            assertThat(control.takeSend()).isEqualTo(i);
        }
        assertThat(control.takeSend()).isEqualTo(-1);
    }

    /** Send {@code index}'s message as its receiver decodes it; then its receipt frees the buffer. */
    private static FabricControl.Abandonment sent(final FabricControl control, final int index) {
        final MemorySegment message = control.post(index);
        MemorySegment.copy(message, 0, control.receiveBuffer(0), 0, message.byteSize());
        final FabricControl.Abandonment abandonment =
                (FabricControl.Abandonment) control.decode(0, (int) message.byteSize());
        control.posted(index, 0);
        assertThat(control.receipted(abandonment.nonce())).isEqualTo(index);
        return abandonment;
    }

    /** Sends every waiting abandonment through one freed buffer, oldest first. */
    private static List<FabricControl.Abandonment> drain(final FabricControl control) {
        final List<FabricControl.Abandonment> sent = new ArrayList<>();
        for (int index = control.takeWaiting(SELF); index >= 0; index = control.takeWaiting(SELF)) {
            sent.add(sent(control, index));
        }
        return sent;
    }

    @Test
    void abandonmentsBeyondTheSendBuffersWaitAndGoOldestFirstAsBuffersFreeUp() {
        try (Arena arena = Arena.ofConfined()) {
            final FabricControl control = new FabricControl(arena, FabricControl.MESSAGE_BYTES);
            fillSends(control);
            for (int imm = 0; imm < 64; imm++) {
                assertThat(control.queue(PEER, KEY, imm, 1, "lost " + imm)).isTrue();
            }
            assertThat(control.backlog()).isEqualTo(64);
            assertThat(control.takeWaiting(SELF)).as("no buffer is free").isEqualTo(-1);
            assertThat(control.sending()).isTrue();

            control.releaseSend(3);
            final List<FabricControl.Abandonment> sent = drain(control);

            assertThat(sent).extracting(FabricControl.Abandonment::imm).containsExactlyElementsOf(range(64));
            assertThat(sent).allSatisfy(a -> {
                assertThat(a.peer()).isEqualTo(SELF);
                assertThat(a.missing()).isEqualTo(1);
                assertThat(a.cause()).isEqualTo("lost " + a.imm());
                assertThat(a.key()).isEqualTo(KEY);
                assertThat(control.firstTime(a.nonce())).as("reported once").isTrue();
            });
            assertThat(sent).extracting(FabricControl.Abandonment::nonce).doesNotHaveDuplicates();
            assertThat(control.backlogged()).isFalse();
            assertThat(control.droppedAbandonments()).isZero();
        }
    }

    /** The same (peer, imm) waiting twice goes once, with the missing counts summed and the first cause. */
    @Test
    void aWaitingAbandonmentOfTheSamePeerAndImmJoinsTheFirstSummingMissingAndKeepingItsCause() {
        try (Arena arena = Arena.ofConfined()) {
            final FabricControl control = new FabricControl(arena, FabricControl.MESSAGE_BYTES);
            fillSends(control);
            control.queue(PEER, KEY, 5, 2, "timed out");
            control.queue(PEER, KEY, 6, 1, "other imm");
            control.queue(OTHER_PEER, KEY, 5, 4, "other peer");
            control.queue(PEER, KEY, 5, 3, "cancelled");
            control.queue(PEER, KEY, 5, Integer.MAX_VALUE, "closed");
            assertThat(control.backlog()).isEqualTo(3);

            control.releaseSend(0);
            final List<FabricControl.Abandonment> sent = drain(control);

            assertThat(sent)
                    .extracting(
                            FabricControl.Abandonment::imm,
                            FabricControl.Abandonment::missing,
                            FabricControl.Abandonment::cause)
                    .containsExactly(
                            tuple(5, Integer.MAX_VALUE, "timed out"),
                            tuple(6, 1, "other imm"),
                            tuple(5, 4, "other peer"));
            assertThat(control.queue(PEER, KEY, 5, 1, "later")).isTrue();
            assertThat(control.backlog()).as("a pair sent already waits anew").isEqualTo(1);
        }
    }

    @Test
    void aNewPairBeyondTheCapIsDroppedAndCountedWhileWaitingPairsStillJoin() {
        try (Arena arena = Arena.ofConfined()) {
            final FabricControl control = new FabricControl(arena, FabricControl.MESSAGE_BYTES, 4);
            fillSends(control);
            for (int imm = 0; imm < 4; imm++) {
                assertThat(control.queue(PEER, KEY, imm, 1, "lost")).isTrue();
            }

            assertThat(control.queue(PEER, KEY, 4, 1, "lost")).isFalse();
            assertThat(control.queue(OTHER_PEER, KEY, 0, 1, "lost")).isFalse();
            assertThat(control.queue(PEER, KEY, 2, 5, "again"))
                    .as("joins imm 2")
                    .isTrue();

            assertThat(control.droppedAbandonments()).isEqualTo(2);
            control.releaseSend(9);
            assertThat(drain(control))
                    .extracting(FabricControl.Abandonment::imm, FabricControl.Abandonment::missing)
                    .containsExactly(tuple(0, 1), tuple(1, 1), tuple(2, 6), tuple(3, 1));
            assertThat(control.queue(PEER, KEY, 4, 1, "lost")).as("room again").isTrue();
            assertThat(control.droppedAbandonments()).isEqualTo(2);
        }
    }

    /** The ring wraps: more pairs pass through than it holds at once, each sent once, in order. */
    @Test
    void theBacklogWrapsAroundItsCapacity() {
        try (Arena arena = Arena.ofConfined()) {
            final FabricControl control = new FabricControl(arena, FabricControl.MESSAGE_BYTES, 4);
            fillSends(control);
            control.releaseSend(0);
            final List<Integer> sent = new ArrayList<>();
            for (int imm = 0; imm < 10; imm++) {
                control.queue(PEER, KEY, imm, 1, "lost");
                if (imm % 3 == 2) {
                    drain(control).forEach(a -> sent.add(a.imm()));
                }
            }
            drain(control).forEach(a -> sent.add(a.imm()));
            assertThat(sent).containsExactlyElementsOf(range(10));
            assertThat(control.droppedAbandonments()).isZero();
        }
    }

    @Test
    void clearingTheSendsEmptiesTheBacklogAndSaysHowManyWaited() {
        try (Arena arena = Arena.ofConfined()) {
            final FabricControl control = new FabricControl(arena, FabricControl.MESSAGE_BYTES);
            fillSends(control);
            control.queue(PEER, KEY, 1, 1, "lost");
            control.queue(PEER, KEY, 2, 1, "lost");

            assertThat(control.clearSends()).isEqualTo(2);

            assertThat(control.sending()).isFalse();
            assertThat(control.takeWaiting(SELF)).isEqualTo(-1);
            assertThat(control.queue(PEER, KEY, 1, 1, "lost")).isTrue();
            assertThat(control.backlog()).isEqualTo(1);
        }
    }

    private static List<Integer> range(final int count) {
        return IntStream.range(0, count).boxed().toList();
    }
}
