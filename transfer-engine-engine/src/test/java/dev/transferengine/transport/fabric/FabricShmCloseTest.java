package dev.transferengine.transport.fabric;

import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;

import java.lang.foreign.Arena;
import java.util.stream.LongStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Closing an shm endpoint that holds messages unexpected ({@link FabricUnexpectedMessages}): the close takes them
 * first. Before, libfabric 2.1's fi_close handed them to {@code smr_discard}, which wrote into the sender's region;
 * a sender of this process had closed, its region was unmapped, and the JVM died (SIGSEGV, exit 134) in that
 * fi_close, as in CI after FabricControlOutsiderTest's shm cases.
 */
class FabricShmCloseTest {

    private static final int HELD = 8;

    private final Arena arena = Arena.ofShared();
    private final FabricFixture fixture = new FabricFixture();
    private final RecordingDomainListener receiverEvents = new RecordingDomainListener();
    private final RecordingDomainListener memberEvents = new RecordingDomainListener();

    @AfterEach
    void close() {
        fixture.close();
        arena.close();
    }

    /**
     * A member sends nine 1 KiB messages (shm injects them) to a receiver with one 4 KiB buffer: one lands, eight
     * are held. The member closes (its region goes), then the receiver: it survives, and the held messages reach no
     * buffer of the application.
     */
    @Test
    void aReceiverHoldingMessagesOfAClosedMemberCloses() {
        FabricFixture.assumeAvailable("shm");
        final String library = FabricFixture.library();
        assumeTrue(
                library != null && FabricLibrary.open(library).version() >= FabricLibrary.version(1, 19),
                "tagged shm (held messages of a size class) from libfabric 1.19");
        final Domain receiver = fixture.open("shm", 0, receiverEvents);
        final Domain member = fixture.open("shm", 0, memberEvents);
        receiver.postReceive(1, arena.allocate(4096, 64));
        final long peer = member.resolve(receiver.address());

        for (long token = 10; token <= 10 + HELD; token++) {
            member.send(token, peer, arena.allocate(1024, 64));
        }
        fixture.pollUntil(() -> receiverEvents.receives.containsKey(1L)
                && LongStream.rangeClosed(10, 10 + HELD).allMatch(memberEvents::ended));
        fixture.pollAll(); // the receiver reads what its queue still has: held, as no buffer fits
        member.close();
        receiver.close();

        assertThat(memberEvents.failed).isEmpty();
        assertThat(receiverEvents.receives).containsOnlyKeys(1L);
    }
}
