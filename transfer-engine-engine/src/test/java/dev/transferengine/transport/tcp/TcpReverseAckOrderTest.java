package dev.transferengine.transport.tcp;

import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * With reverse ACKs agreed, the answers to one connection's requests come on two sockets: on the connection itself
 * (ACK, NACK) and, as REVERSE_ACK frames, on the connection the peer opened back. The initiator applies them in
 * request order whichever socket delivers first: an answer that overtook earlier ones waits for them, and every
 * request ends once. The peer is hand-driven ({@link RawAcceptor} accepts the initiator's connection, a
 * {@link RawPeer} opens the one back), so which answer arrives first is the test's choice, not the scheduler's; the
 * initiator runs on a manual clock that stands still, so no bound passes.
 */
class TcpReverseAckOrderTest {

    private static final int REQUESTS = 3;

    private final Ends ends = new Ends();
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final TcpDomain initiator = TcpDomains.open(ends, Map.of(), clock::get);
    private final RawAcceptor peer;
    private final RawPeer back;
    /** The ids of the initiator's requests {@code 10, 11, 12}, as they reached the peer. */
    private final long[] ids = new long[REQUESTS];

    TcpReverseAckOrderTest() throws IOException {
        peer = new RawAcceptor();
        final long handle = initiator.resolve(peer.address());
        for (int i = 0; i < REQUESTS; i++) {
            initiator.write(new WriteDescriptor()
                    .token(10 + i)
                    .source(MemorySegment.NULL, 0, 0, 0)
                    .target(handle, 0, 0, 77)
                    .imm(true, 10 + i));
        }
        peer.accept(initiator, TcpFrame.FEATURE_REVERSE_ACK);
        for (int i = 0; i < REQUESTS; i++) {
            ids[i] = peer.nextRequest(initiator).token();
        }
        back = new RawPeer(initiator)
                .authenticateAs(
                        initiator, peer.address().toBytes(), RawAcceptor.INCARNATION, TcpFrame.FEATURE_REVERSE_ACK);
    }

    @AfterEach
    void close() throws IOException {
        back.close();
        peer.close();
        initiator.close();
    }

    @Test
    void anAckOnTheConnectionAheadOfAnEarlierReverseAckWaitsForIt() throws IOException {
        peer.sendFrame(TcpFrame.ACK, 2, ids[1], 0); // requests 11 and 12, ahead of 10's answer
        settle();
        assertThat(ends.order).as("nothing ends before request 10 is answered").isEmpty();

        back.send(reverseAck(ids[0], 1));
        pollUntil(() -> ends.order.size() == REQUESTS, initiator);

        settle();
        assertThat(ends.order).containsExactly(10L, 11L, 12L);
        assertThat(ends.failed).isEmpty();
        assertThat(TcpDomains.count(initiator, TcpCounter.MALFORMED_FRAMES)).isZero();
    }

    @Test
    void aReverseAckAheadOfEarlierAnswersOnTheConnectionWaitsForThem() throws IOException {
        back.send(reverseAck(ids[2], 1)); // request 12, ahead of 10's and 11's answers
        settle();
        assertThat(ends.order).as("nothing ends before request 10 is answered").isEmpty();

        peer.sendFrame(TcpFrame.ACK, 1, ids[0], 0);
        pollUntil(() -> ends.order.size() == 1, initiator);
        settle();
        assertThat(ends.order).as("12 still waits for 11").containsExactly(10L);

        peer.sendFrame(TcpFrame.NACK, TcpRefusal.UNKNOWN_KEY.code(), ids[1], -1);
        pollUntil(() -> ends.order.size() == REQUESTS, initiator);

        settle();
        assertThat(ends.order).containsExactly(10L, 11L, 12L);
        assertThat(ends.failed.keySet()).containsExactly(11L);
        assertThat(ends.failed.get(11L)).isInstanceOf(RemoteAccessException.class);
        assertThat(TcpDomains.count(initiator, TcpCounter.MALFORMED_FRAMES)).isZero();
    }

    /** A REVERSE_ACK for {@code count} requests from {@code first} of the connection the peer accepted. */
    private ByteBuffer reverseAck(final long first, final int count) {
        final ByteBuffer frame = ByteBuffer.allocate(TcpFrame.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        new TcpFrame(frame).encode(TcpFrame.REVERSE_ACK, 0, count, first, peer.connectionId(), 0, 0);
        return frame;
    }

    /** Polls the initiator a while: what arrived is read and applied, or held. */
    private void settle() {
        for (int i = 0; i < 200; i++) {
            initiator.poll();
        }
    }

    /** Every end the domain reports, in order, duplicates included. */
    private static final class Ends extends RecordingDomainListener {
        final List<Long> order = new CopyOnWriteArrayList<>();

        @Override
        public void onComplete(final long token, final long bytes) {
            order.add(token);
            super.onComplete(token, bytes);
        }

        @Override
        public void onFailed(final long token, final TransferEngineException error) {
            order.add(token);
            super.onFailed(token, error);
        }
    }
}
