package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A CQ batch that holds both this side's own completions and imms of writes that landed here reports the imms first
 * ({@code FabricDomain.handleBatch}), and every entry is still reported once. shm makes the batch deterministic: a
 * zero-byte write's completion is in the writer's CQ when its post returns, and a peer's imm write is turned into a CQ
 * entry by the next progress call, after it.
 */
class FabricCompletionOrderTest {

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        fixture.close();
        arena.close();
    }

    /** Records the order of completions and imms. */
    private static final class OrderedListener extends RecordingDomainListener {
        final List<String> events = new CopyOnWriteArrayList<>();

        @Override
        public void onComplete(final long token, final long bytes) {
            events.add("done " + token);
            super.onComplete(token, bytes);
        }

        @Override
        public void onImm(final long reservation) {
            events.add("imm " + (int) reservation);
            super.onImm(reservation);
        }
    }

    @Test
    void anImmReadInTheSameBatchAsAnOwnCompletionIsReportedFirstAndBothOnce() {
        FabricFixture.assumeAvailable("shm");
        final OrderedListener aEvents = new OrderedListener();
        final OrderedListener bEvents = new OrderedListener();
        final Domain a = fixture.open("shm", 0, aEvents);
        final Domain b = fixture.open("shm", 0, bEvents);
        final MemorySegment aMemory = arena.allocate(4096, 4096);
        final MemorySegment bMemory = arena.allocate(4096, 4096);
        final long aKey = a.register(aMemory, Device.host());
        final long bKey = b.register(bMemory, Device.host());
        final long aToB = a.resolve(b.address());
        final long bToA = b.resolve(a.address());

        // both directions mapped and answered once, so that neither post below waits for the peer
        a.write(immWrite(1, aMemory, aKey, aToB, bMemory, bKey, 7));
        b.write(plainWrite(2, bMemory, bKey, bToA, aMemory, aKey));
        fixture.pollUntil(
                () -> aEvents.completed.size() == 1 && bEvents.completed.size() == 1 && bEvents.imms.size() == 1);
        bEvents.events.clear();

        b.write(plainWrite(3, bMemory, bKey, bToA, aMemory, aKey)); // its completion is in b's CQ now
        a.write(immWrite(4, aMemory, aKey, aToB, bMemory, bKey, 42)); // its imm becomes an entry at b's next poll
        fixture.pollUntil(() -> bEvents.events.size() == 2 && aEvents.completed.size() == 2);

        assertThat(bEvents.events).containsExactly("imm 42", "done 3");
        assertThat(bEvents.failed).isEmpty();
        assertThat(aEvents.failed).isEmpty();
    }

    private static WriteDescriptor immWrite(
            final long token,
            final MemorySegment src,
            final long srcKey,
            final long peer,
            final MemorySegment dst,
            final long dstKey,
            final int imm) {
        return new WriteDescriptor()
                .token(token)
                .source(src, 0, srcKey, 0)
                .target(peer, dst.address(), 0, dstKey)
                .imm(true, imm);
    }

    private static WriteDescriptor plainWrite(
            final long token,
            final MemorySegment src,
            final long srcKey,
            final long peer,
            final MemorySegment dst,
            final long dstKey) {
        return new WriteDescriptor().token(token).source(src, 0, srcKey, 0).target(peer, dst.address(), 0, dstKey);
    }
}
