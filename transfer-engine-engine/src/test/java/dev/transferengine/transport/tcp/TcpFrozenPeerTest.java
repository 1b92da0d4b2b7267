package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A receiver that freezes mid-stream (it stops reading, as a partitioned or stalled host does): the sender's queue
 * to it stays within its bound, the frame timeout of the sender's manual clock fails everything outstanding, and
 * once the receiver fenced its region with new keys, the bytes that were already on the socket when it froze are
 * refused when it wakes up: nothing lands late.
 */
class TcpFrozenPeerTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final int QUEUE_BOUND = 64;
    private static final int WRITES = 100;
    private static final int SIZE = 64 * 1024;

    private final Arena arena = Arena.ofShared();
    private final RecordingDomainListener senderEvents = new RecordingDomainListener();
    private final RecordingDomainListener receiverEvents = new RecordingDomainListener();
    private long time = 1_000 * SECOND;
    private final TcpDomain sender = TcpDomains.open(
            senderEvents,
            Map.of(TcpSettings.MAX_QUEUED_PER_PEER, Integer.toString(QUEUE_BOUND), TcpSettings.FRAME_TIMEOUT, "1000"),
            () -> time);
    private final TcpDomain receiver = TcpDomains.open(receiverEvents);

    @AfterEach
    void close() {
        sender.close();
        receiver.close();
        arena.close();
    }

    @Test
    void aFrozenReceiverBoundsTheQueueFailsOutstandingWritesAndAFenceRefusesWhatWasInFlight() {
        final MemorySegment source = arena.allocate(SIZE);
        source.fill((byte) 0x5C);
        final long sourceKey = sender.register(source, Device.host());
        final MemorySegment target = arena.allocate(SIZE);
        final long oldKey = receiver.register(target, Device.host());
        final long peer = sender.resolve(receiver.address());
        sender.write(new WriteDescriptor()
                .token(0)
                .source(source, 0, sourceKey, SIZE)
                .target(peer, 0, 0, oldKey));
        pollUntil(() -> senderEvents.ended(0), sender, receiver);
        target.fill((byte) 0);

        // From here on the receiver is not polled: it is frozen.
        for (int i = 1; i <= WRITES; i++) {
            sender.write(new WriteDescriptor()
                    .token(i)
                    .source(source, 0, sourceKey, SIZE)
                    .target(peer, 0, 0, oldKey));
        }
        assertThat(senderEvents.failed).hasSize(WRITES - QUEUE_BOUND).allSatisfy((token, error) -> assertThat(error)
                .isInstanceOf(BackPressureException.class));
        for (int i = 0; i < 100; i++) {
            sender.poll(); // pushes what the sockets take
        }
        // Two sweeps of the manual clock, each past the 1 s frame timeout: the first sees the quiet start.
        for (int sweep = 0; sweep < 4 && senderEvents.ended() < WRITES + 1; sweep++) {
            time += 2 * SECOND;
            sender.poll();
        }

        assertThat(senderEvents.completed).containsOnlyKeys(0L);
        assertThat(senderEvents.failed).hasSize(WRITES);
        assertThat(senderEvents.failed.values())
                .filteredOn(PeerUnreachableException.class::isInstance)
                .hasSize(QUEUE_BOUND);
        assertThat(TcpDomains.count(sender, TcpCounter.FRAME_TIMEOUT)).isEqualTo(1);

        // The application fences before it reuses the memory; then the receiver wakes up.
        receiver.deregister(oldKey);
        final long newKey = receiver.register(target, Device.host());
        pollUntil(() -> receiver.peers().isEmpty(), receiver);

        assertThat(newKey).isNotEqualTo(oldKey);
        assertThat(TcpDomains.count(receiver, TcpCounter.REFUSED_UNKNOWN_KEY)).isPositive();
        assertThat(target.mismatch(arena.allocate(SIZE)))
                .as("nothing landed after the fence")
                .isEqualTo(-1);
        assertThat(receiverEvents.bytesReceived).isEqualTo(SIZE);
    }
}
