package dev.transferengine.transport.tcp;

import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.spi.RecordingDomainListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

class TcpDomainSendTest {

    private final Arena arena = Arena.ofShared();
    private final RecordingDomainListener senderEvents = new RecordingDomainListener();
    private final RecordingDomainListener receiverEvents = new RecordingDomainListener();
    private TcpDomain sender;
    private TcpDomain receiver;
    private long peer;

    @BeforeEach
    void open() {
        sender = TcpDomains.open(senderEvents);
        receiver = TcpDomains.open(receiverEvents);
        peer = sender.resolve(receiver.address());
    }

    @AfterEach
    void close() {
        sender.close();
        receiver.close();
        arena.close();
    }

    @Test
    void sendLandsInAPostedBufferAndCompletesBothSides() {
        final MemorySegment buffer = arena.allocate(256);
        receiver.postReceive(100, buffer);

        sender.send(1, peer, message("hello, receiver"));
        pollUntil(() -> senderEvents.ended() == 1 && receiverEvents.receives.size() == 1, sender, receiver);

        assertThat(senderEvents.completed).containsEntry(1L, 15L);
        assertThat(receiverEvents.receives).containsEntry(100L, 15);
        assertThat(text(buffer, 15)).isEqualTo("hello, receiver");
    }

    @Test
    void sendsTakeBuffersInPostingOrderSkippingOnesTooSmall() {
        final MemorySegment small = arena.allocate(8);
        final MemorySegment large = arena.allocate(64);
        final MemorySegment second = arena.allocate(64);
        receiver.postReceive(1, small);
        receiver.postReceive(2, large);
        receiver.postReceive(3, second);

        sender.send(10, peer, message("a message of 31 bytes in total."));
        sender.send(11, peer, message("tiny"));
        sender.send(12, peer, message("third"));
        pollUntil(() -> senderEvents.ended() == 3, sender, receiver);

        assertThat(senderEvents.failed).isEmpty();
        assertThat(receiverEvents.receives)
                .containsExactly(java.util.Map.entry(2L, 31), java.util.Map.entry(1L, 4), java.util.Map.entry(3L, 5));
        assertThat(text(large, 31)).isEqualTo("a message of 31 bytes in total.");
        assertThat(text(small, 4)).isEqualTo("tiny");
        assertThat(text(second, 5)).isEqualTo("third");
    }

    @Test
    void aReturnedBufferServesTheNextSend() {
        final MemorySegment buffer = arena.allocate(32);
        for (int round = 0; round < 5; round++) {
            receiver.postReceive(round, buffer);
            sender.send(round, peer, message("round " + round));
            final int expected = round + 1;
            pollUntil(
                    () -> receiverEvents.receives.size() == expected && senderEvents.ended() == expected,
                    sender,
                    receiver);
            assertThat(text(buffer, 7)).isEqualTo("round " + round);
        }
        assertThat(senderEvents.completed).hasSize(5);
    }

    @Test
    void sendWithoutAFittingBufferIsRefusedAndLeavesPostedBuffersUntouched() {
        final MemorySegment tooSmall = arena.allocate(4).fill((byte) 7);
        receiver.postReceive(1, tooSmall);

        sender.send(1, peer, message("too long for the buffer"));
        sender.send(2, peer, message("ok"));
        pollUntil(() -> senderEvents.ended() == 2, sender, receiver);

        assertThat(senderEvents.failed.get(1L))
                .isInstanceOfSatisfying(RemoteAccessException.class, e -> assertThat(e.reason())
                        .isEqualTo(RemoteAccessException.Reason.NO_RECEIVE_BUFFER))
                .hasMessageContaining("23 bytes")
                .hasMessageContaining("largest posted receive buffer: 4 bytes");
        assertThat(senderEvents.completed).containsOnlyKeys(2L);
        assertThat(receiverEvents.receives).containsExactly(java.util.Map.entry(1L, 2));
    }

    @Test
    void sendWithNoBufferPostedAtAllIsRefused() {
        sender.send(1, peer, message("nobody listens"));
        pollUntil(() -> senderEvents.ended() == 1, sender, receiver);

        assertThat(senderEvents.failed.get(1L))
                .isInstanceOfSatisfying(RemoteAccessException.class, e -> assertThat(e.reason())
                        .isEqualTo(RemoteAccessException.Reason.NO_RECEIVE_BUFFER))
                .hasMessageContaining("none");
    }

    @Test
    void largeSendArrivesWhole() {
        final MemorySegment buffer = arena.allocate(2 * 1024 * 1024);
        receiver.postReceive(9, buffer);
        final MemorySegment message = arena.allocate(1_500_000);
        for (long i = 0; i < message.byteSize(); i++) {
            message.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31));
        }

        sender.send(1, peer, message);
        pollUntil(() -> senderEvents.ended() == 1, sender, receiver);

        assertThat(receiverEvents.receives).containsEntry(9L, 1_500_000);
        assertThat(buffer.asSlice(0, message.byteSize()).mismatch(message)).isEqualTo(-1);
    }

    private MemorySegment message(final String text) {
        return arena.allocateFrom(text).asSlice(0, text.length());
    }

    private static String text(final MemorySegment buffer, final int length) {
        return new String(
                buffer.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE), java.nio.charset.StandardCharsets.US_ASCII);
    }
}
