package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Messages that find no buffer at their receiver (RxM queues them "unexpected") while the receiver inserts
 * addresses: libfabric 2.1's tcp;ofi_rxm read a null connection of each such message in every fi_av_insert and
 * killed the JVM (SIGSEGV in {@code rxm_get_addr}) until the engine asked for FI_DIRECTED_RECV
 * (docs/delivery-contract.md). Runs on the libfabric of the run (1.17, or 2.1 with {@code TE_FABRIC_LIBRARY}).
 */
class FabricUnexpectedMessageTest {

    /** More abandonments than the receiver has control buffers posted: the rest arrive unexpected. */
    private static final int ABANDONMENTS = FabricControl.RECEIVES + 4;

    private final Arena arena = Arena.ofShared();
    private final FabricFixture senderSide = new FabricFixture();
    private final FabricFixture receiverSide = new FabricFixture();

    @AfterEach
    void close() {
        receiverSide.close();
        senderSide.close();
        arena.close();
    }

    /**
     * A sender that the receiver never resolved sends more abandonments than the receiver has control buffers and
     * closes (its connection with it) before the receiver polls. Polling, the receiver takes eight into its
     * buffers and RxM queues the rest unexpected; answering the first, it resolves the sender (an AV insert) while
     * they wait. It lives, and reports every abandonment once: the queued ones land in its buffers posted again.
     */
    @Test
    void aReceiverResolvesPeersWhileAClosedSendersMessagesWaitUnexpected() {
        FabricFixture.assumeAvailable("tcp");
        final List<Integer> abandoned = new CopyOnWriteArrayList<>();
        final RecordingDomainListener receiverEvents = new RecordingDomainListener() {
            @Override
            public void onImmAbandoned(
                    final NetworkAddress peer, final int imm, final int missing, final String cause) {
                abandoned.add(imm);
            }
        };
        final RecordingDomainListener senderEvents = new RecordingDomainListener();
        final Domain receiver = receiverSide.open("tcp", 0, receiverEvents);
        final FabricDomain sender = (FabricDomain) senderSide.open("tcp", 0, senderEvents);
        final long peer = sender.resolve(receiver.address());
        final long targetKey = connect(sender, senderEvents, receiver, peer);

        for (int imm = 0; imm < ABANDONMENTS; imm++) {
            sender.abandonImm(peer, targetKey, imm, 1, "abandoned " + imm);
        }
        senderSide.pollUntil(() -> sender.outstanding() == 0); // all sent: on their way in the receiver's socket
        senderSide.close();

        receiverSide.pollUntil(() -> abandoned.size() == ABANDONMENTS);

        assertThat(abandoned)
                .containsExactlyInAnyOrderElementsOf(
                        IntStream.range(0, ABANDONMENTS).boxed().toList());
    }

    /**
     * Connects sender and receiver with a write (no message, so the receiver resolves nobody); answers the key of the
     * receiver's region it wrote.
     */
    private long connect(
            final Domain sender, final RecordingDomainListener senderEvents, final Domain receiver, final long peer) {
        final MemorySegment source = arena.allocate(64, 64);
        final MemorySegment target = arena.allocate(64, 64);
        final long sourceKey = sender.register(source, Device.host());
        final long targetKey = receiver.register(target, Device.host());
        sender.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, 64)
                .target(peer, target.address(), 0, targetKey));
        senderSide.pollUntil(() -> {
            receiverSide.pollAll();
            return senderEvents.ended(1);
        });
        assertThat(senderEvents.completed).containsKey(1L);
        return targetKey;
    }
}
