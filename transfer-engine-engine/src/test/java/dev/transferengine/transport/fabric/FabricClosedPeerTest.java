package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A peer endpoint of this process closes first: shm reaches it through its own mapping, which its close unmaps, so
 * before {@link FabricLocalEndpoints} the next write killed the JVM (SIGSEGV, exit 134). Now it fails typed. A
 * writer of this process that closes before its target read its first post still ends the JVM on 2.1 (gated).
 */
class FabricClosedPeerTest {

    /** Runs {@link #aTargetReadsTheFirstPostOfAWriterOfThisProcessThatClosed}, which ends the JVM on libfabric 2.1. */
    static final String CLOSED_WRITER_PROPERTY = "te.fabric.shmClosedWriter";

    private final Arena arena = Arena.ofShared();
    private final FabricFixture writerSide = new FabricFixture();
    private final FabricFixture targetSide = new FabricFixture();

    @AfterEach
    void close() {
        targetSide.close();
        writerSide.close();
        arena.close();
    }

    @Test
    void writesToAnShmPeerOfThisProcessThatClosedFailAsUnreachable() {
        FabricFixture.assumeAvailable("shm");
        final RecordingDomainListener events = new RecordingDomainListener();
        final Domain writer = writerSide.open("shm", 0, events);
        final Domain target = targetSide.open("shm", 0, new RecordingDomainListener());
        final MemorySegment src = arena.allocate(4096, 4096);
        final MemorySegment dst = arena.allocate(4096, 4096);
        final long srcKey = writer.register(src, Device.host());
        final long dstKey = target.register(dst, Device.host());
        final long peer = writer.resolve(target.address());
        writer.write(new WriteDescriptor()
                .token(1)
                .source(src, 0, srcKey, 4096)
                .target(peer, dst.address(), 0, dstKey)
                .imm(true, 1));
        writerSide.pollUntil(() -> {
            targetSide.pollAll(); // shm progress is manual: the target must poll for the write to land
            return events.ended(1);
        });
        assertThat(events.completed).containsKey(1L);

        targetSide.close();
        for (int w = 2; w <= 4; w++) {
            writer.write(new WriteDescriptor()
                    .token(w)
                    .source(src, 0, srcKey, 4096)
                    .target(peer, dst.address(), 0, dstKey)
                    .imm(true, w));
            final long token = w;
            writerSide.pollUntil(() -> events.ended(token));
        }

        assertThat(events.failed).containsOnlyKeys(2L, 3L, 4L);
        assertThat(events.failed.values())
                .allSatisfy(error -> assertThat(error).isInstanceOf(PeerUnreachableException.class));
        assertThat(writer.peers())
                .anySatisfy(info -> assertThat(info.unreachable()).isTrue());
    }

    /**
     * A writer endpoint of this process closes before its target read the writer's first post. libfabric 2.1's shm
     * sends a connection request with a peer's first command; the target reads it at its next progress and looks the
     * writer's name up in the process's list of endpoint names, which keeps a closed endpoint's entry and the address of
     * its region, unmapped by the close: {@code smr_progress_connreq} reads the region's pid there, SIGSEGV in {@code
     * smr_ep_progress} (exit 134), 1 of 1 runs on 2.1. {@link FabricLocalEndpoints} holds an endpoint open only for
     * the AVs that inserted it, not for the endpoints it posted to. Not fixed yet (docs/delivery-contract.md, "Known
     * defects gated in the kit"): runs only with {@code -D}{@value #CLOSED_WRITER_PROPERTY}{@code =true}.
     */
    @Test
    void aTargetReadsTheFirstPostOfAWriterOfThisProcessThatClosed() {
        FabricFixture.assumeAvailable("shm");
        assumeTrue(
                Boolean.getBoolean(CLOSED_WRITER_PROPERTY),
                "ends the JVM on libfabric 2.1; run with -D" + CLOSED_WRITER_PROPERTY + "=true");
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final Domain writer = writerSide.open("shm", 0, new RecordingDomainListener());
        final Domain target = targetSide.open("shm", 0, targetEvents);
        final MemorySegment src = arena.allocate(4096, 4096);
        final MemorySegment dst = arena.allocate(4096, 4096);
        final long srcKey = writer.register(src, Device.host());
        final long dstKey = target.register(dst, Device.host());
        final long peer = writer.resolve(target.address());
        writer.write(new WriteDescriptor()
                .token(1)
                .source(src, 0, srcKey, 64)
                .target(peer, dst.address(), 0, dstKey)
                .imm(true, 1));
        writerSide.pollAll();

        writerSide.close(); // the target has not polled: the writer's first post waits unread in its queue
        targetSide.pollAll();

        assertThat(targetEvents.failed).isEmpty();
    }
}
