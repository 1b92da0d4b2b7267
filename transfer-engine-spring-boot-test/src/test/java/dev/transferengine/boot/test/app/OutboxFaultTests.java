package dev.transferengine.boot.test.app;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.boot.test.AutoConfigureTransferEngineFaults;
import dev.transferengine.boot.test.LoopbackPeer;
import dev.transferengine.boot.test.TransferEngineFaults;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests as an application writes them for its sending code ({@link Outbox}): the loopback pair with the
 * conformance kit's fault injection, a partition that times a delivery out, a partition that heals, a peer that
 * dies.
 */
@SpringBootTest(classes = InboxApplication.class)
@AutoConfigureTransferEngineFaults
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_EACH_TEST_METHOD)
class OutboxFaultTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final Arena arena = Arena.ofShared();

    @Autowired
    private Outbox outbox;

    @Autowired
    private LoopbackPeer peer;

    @Autowired
    private TransferEngineFaults faults;

    @AfterEach
    void freeArena() {
        arena.close();
    }

    @Test
    void aDeliveryThatCannotLeaveTimesOutAndLandsNothing() {
        final MemorySegment landing = arena.allocate(4096, 4096);
        final MemoryRegion target = peer.engine().register(landing, Device.host());

        try (TransferEngineFaults.Hold _ = faults.partition()) {
            StepVerifier.create(faults.expiring(outbox.deliver(target.descriptor(), "lost", 3)))
                    .expectError(TransferTimeoutException.class)
                    .verify(WAIT);
        }

        // healed: the timed-out write was withdrawn, not sent late; the next delivery lands
        StepVerifier.create(outbox.deliver(target.descriptor(), "found", 4)
                        .then(peer.reactive().expectImm(4, 1)))
                .expectComplete()
                .verify(WAIT);
        assertThat(text(landing, 5)).isEqualTo("found");
        assertThat(peer.engine().immCounter(3).balance()).isZero();
    }

    @Test
    void aDeliveryHeldByAPartitionLandsOnceItHeals() {
        final MemorySegment landing = arena.allocate(4096, 4096);
        final MemoryRegion target = peer.engine().register(landing, Device.host());

        final TransferEngineFaults.Hold partition = faults.partition();
        StepVerifier.create(outbox.deliver(target.descriptor(), "late", 5)
                        .then(peer.reactive().expectImm(5, 1)))
                .then(partition::close)
                .expectComplete()
                .verify(WAIT);
        assertThat(text(landing, 4)).isEqualTo("late");
    }

    @Test
    void aDeliveryToAKilledPeerFailsWithATypedError() {
        final MemoryRegion target = peer.engine().register(arena.allocate(4096, 4096), Device.host());

        faults.killPeer();

        StepVerifier.create(faults.expiring(outbox.deliver(target.descriptor(), "anyone?", 6)))
                .expectError(TransferEngineException.class)
                .verify(WAIT);
    }

    private static String text(final MemorySegment segment, final int length) {
        return new String(segment.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }
}
