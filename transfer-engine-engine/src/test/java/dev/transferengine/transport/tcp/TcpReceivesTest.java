package dev.transferengine.transport.tcp;

import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.spi.RecordingDomainListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

/** Receive buffers shared fairly between peers (issue 16, item 6): one member's SEND flood costs no other member. */
class TcpReceivesTest {

    private static final int POOL = 4;
    private static final int ROUNDS = 20;
    private static final int FLOOD = 20;

    private final Arena arena = Arena.ofShared();
    private final RecordingDomainListener flooderEvents = new RecordingDomainListener();
    private final RecordingDomainListener memberEvents = new RecordingDomainListener();
    private final RecordingDomainListener receiverEvents = new RecordingDomainListener();
    private final TcpDomain flooder = TcpDomains.open(flooderEvents);
    private final TcpDomain member = TcpDomains.open(memberEvents);
    private final TcpDomain receiver = TcpDomains.open(receiverEvents);
    private long nextBuffer;

    @AfterEach
    void close() {
        flooder.close();
        member.close();
        receiver.close();
        arena.close();
    }

    @Test
    void aFloodingMemberTakesItsShareAndTheOtherMemberLosesNoSend() {
        final MemorySegment message = MemorySegment.ofArray("a message".getBytes(StandardCharsets.US_ASCII));
        final long toReceiverFromFlooder = flooder.resolve(receiver.address());
        final long toReceiverFromMember = member.resolve(receiver.address());
        repost(POOL);
        // Both members connect first: a share is owed to connected peers only.
        flooder.send(0, toReceiverFromFlooder, message);
        member.send(0, toReceiverFromMember, message);
        pollUntil(() -> flooderEvents.ended() == 1 && memberEvents.ended() == 1, flooder, member, receiver);
        repost(2); // the application reposts a buffer for each message it handled

        for (int round = 1; round <= ROUNDS; round++) {
            final int receivedBefore = receiverEvents.receives.size();
            // The flood arrives first, all of it, before the member's one send: without fair shares it took every
            // buffer and the member's send was refused.
            for (int i = 0; i < FLOOD; i++) {
                flooder.send((long) round * FLOOD + i, toReceiverFromFlooder, message);
            }
            final int floodEnded = round * FLOOD + 1;
            pollUntil(() -> flooderEvents.ended() == floodEnded, flooder, receiver);
            member.send(round, toReceiverFromMember, message);
            final int memberEnded = round + 1;
            pollUntil(() -> memberEvents.ended() == memberEnded, member, receiver);
            repost(receiverEvents.receives.size() - receivedBefore);
        }

        assertThat(memberEvents.failed).as("the other member loses nothing").isEmpty();
        assertThat(memberEvents.completed).hasSize(ROUNDS + 1);
        // The flood still got buffers (its share and the spare ones), and what it lost it was told about.
        assertThat(flooderEvents.completed.size()).isGreaterThan(ROUNDS);
        assertThat(flooderEvents.failed).isNotEmpty();
        assertThat(flooderEvents.failed.values()).allSatisfy(error -> assertThat(error)
                .isInstanceOfSatisfying(RemoteAccessException.class, refused -> assertThat(refused.reason())
                        .isEqualTo(RemoteAccessException.Reason.NO_RECEIVE_BUFFER)));
        assertThat(flooderEvents.completed.size() + flooderEvents.failed.size()).isEqualTo(ROUNDS * FLOOD + 1);
        assertThat(TcpDomains.count(receiver, TcpCounter.REFUSED_NO_RECEIVE_BUFFER))
                .isEqualTo(flooderEvents.failed.size());
    }

    @Test
    void aLonePeerMayTakeEveryBuffer() {
        final MemorySegment message = MemorySegment.ofArray(new byte[16]);
        final long peer = flooder.resolve(receiver.address());
        repost(POOL);
        for (int i = 0; i < POOL; i++) {
            flooder.send(i, peer, message);
        }
        pollUntil(() -> flooderEvents.ended() == POOL, flooder, receiver);
        assertThat(flooderEvents.failed).isEmpty();
        assertThat(receiverEvents.receives).hasSize(POOL);
    }

    /**
     * A SEND takes its buffer when its header arrives and reaches the application when its payload is complete, so
     * buffers may come back in another order than they were taken: each repost credits the peer that took that buffer.
     */
    @Test
    void aRepostedBufferCreditsThePeerWhoseSendTookItWhateverTheOrder() {
        final TcpReceives receives = new TcpReceives();
        final TcpReceives.Share flood = receives.join();
        final TcpReceives.Share other = receives.join();
        final MemorySegment[] buffers = new MemorySegment[POOL];
        for (int token = 0; token < POOL; token++) {
            buffers[token] = arena.allocate(64);
            receives.post(token, buffers[token]);
        }
        assertThat(receives.takeFitting(8, flood)).isNotNull();
        assertThat(receives.takeFitting(8, flood)).isNotNull();
        final TcpReceives.Posted taken = Objects.requireNonNull(receives.takeFitting(8, other));

        receives.post(taken.token(), buffers[(int) taken.token()]); // the other member's message was handled first

        assertThat(other.held()).as("the other member's buffer is back").isZero();
        assertThat(flood.held()).as("the flood's buffers are still out").isEqualTo(2);
        assertThat(receives.mayTake(flood)).as("the flood holds its share").isFalse();
        assertThat(receives.takeFitting(8, other)).isNotNull();
        assertThat(receives.takeFitting(8, other))
                .as("the other member's share, both buffers")
                .isNotNull();
    }

    private void repost(final int buffers) {
        for (int i = 0; i < buffers; i++) {
            receiver.postReceive(nextBuffer++, arena.allocate(64));
        }
    }
}
