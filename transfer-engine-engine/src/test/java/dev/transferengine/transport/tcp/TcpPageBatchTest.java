package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.RegionBoundsException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.PageBatch;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link TcpDomain#writePages}: a batch of pages leaves as PAGES frames of as many pages as one frame carries, one op
 * each, and the receiver still sees k writes with k imm events; every page's outcome is reported exactly once, the
 * pages of a frame in one report.
 */
class TcpPageBatchTest {

    private static final int PAGE = 1024;
    private static final long TOKEN = 5;

    /** Counts pages completed and failed, and the reports they came in. */
    private static final class Events extends RecordingDomainListener {
        int pagesCompleted;
        int completionReports;
        int failureReports;
        int immReports;
        final List<TransferEngineException> failures = new ArrayList<>();

        @Override
        public void onComplete(final long token, final long bytes) {
            pagesCompleted++;
            completionReports++;
            super.onComplete(token, bytes);
        }

        @Override
        public void onComplete(final long token, final long bytes, final int pieces) {
            pagesCompleted += pieces;
            completionReports++;
            super.onComplete(token, bytes);
        }

        @Override
        public void onFailed(final long token, final TransferEngineException error) {
            failures.add(error);
            failureReports++;
            super.onFailed(token, error);
        }

        @Override
        public void onFailed(final long token, final TransferEngineException error, final int pieces) {
            for (int i = 0; i < pieces; i++) {
                failures.add(error);
            }
            failureReports++;
            super.onFailed(token, error);
        }

        @Override
        public void onImms(final long reservation, final int count) {
            immReports++;
            for (int i = 0; i < count; i++) {
                imms.add((int) reservation);
            }
        }

        int pagesEnded() {
            return pagesCompleted + failures.size();
        }
    }

    private final TcpPageFixture fixture = new TcpPageFixture();
    private final Arena arena = fixture.arena();
    private final Events initiatorEvents = new Events();
    private final Events targetEvents = new Events();

    @AfterEach
    void close() {
        fixture.close();
    }

    @Test
    void aBatchLandsEveryPageInPlaceWithOneImmEachInAFewFrames() {
        final TcpDomain initiator = fixture.open(initiatorEvents, Map.of());
        final TcpDomain target = fixture.open(targetEvents, Map.of());
        final int pages = 1000; // four frames of the 256 KiB write buffer
        final MemorySegment destination = arena.allocate((long) pages * PAGE);
        final long rkey = target.register(destination, Device.host());

        final MemorySegment source = writePages(initiator, target, rkey, pages, -1);
        pollUntil(() -> initiatorEvents.pagesEnded() == pages && targetEvents.imms.size() == pages, initiator, target);

        assertThat(initiatorEvents.failures).isEmpty();
        assertThat(initiatorEvents.pagesCompleted).isEqualTo(pages);
        assertThat(initiatorEvents.completionReports).isBetween(1, pages / TcpPageFrames.pagesPerFrame(PAGE) + 1);
        assertThat(targetEvents.imms).hasSize(pages).containsOnly(77);
        assertThat(targetEvents.immReports).isEqualTo(pages / TcpPageFrames.pagesPerFrame(PAGE) + 1);
        assertThat(targetEvents.bytesReceived).isEqualTo((long) pages * PAGE);
        for (int i = 0; i < pages; i++) {
            final MemorySegment landed = destination.asSlice((long) (pages - 1 - i) * PAGE, PAGE);
            assertThat(landed.mismatch(source.asSlice((long) i * PAGE, PAGE))).isEqualTo(-1);
        }
    }

    @Test
    void anOutOfBoundsPageMidBatchRefusesItsFrameWholeAndTheOtherFramesLand() {
        final TcpDomain initiator = fixture.open(initiatorEvents, Map.of());
        final TcpDomain target = fixture.open(targetEvents, Map.of());
        final int pages = 1000;
        final int perFrame = TcpPageFrames.pagesPerFrame(PAGE);
        final int outOfBounds = perFrame + 10; // in the second frame
        final MemorySegment destination = arena.allocate((long) pages * PAGE);
        final long rkey = target.register(destination, Device.host());

        writePages(initiator, target, rkey, pages, outOfBounds);
        pollUntil(() -> initiatorEvents.pagesEnded() == pages, initiator, target);

        assertThat(initiatorEvents.failures).hasSize(perFrame).allSatisfy(e -> assertThat(e)
                .isInstanceOfSatisfying(RemoteAccessException.class, refused -> assertThat(refused.reason())
                        .isEqualTo(RemoteAccessException.Reason.OUT_OF_BOUNDS)));
        assertThat(initiatorEvents.failureReports).isEqualTo(1);
        assertThat(initiatorEvents.failures.getFirst())
                .hasMessageContaining("of " + perFrame + " pages of " + PAGE + " bytes");
        assertThat(initiatorEvents.pagesCompleted).isEqualTo(pages - perFrame);
        assertThat(targetEvents.imms).hasSize(pages - perFrame);
        for (int i = perFrame; i < 2 * perFrame; i++) { // the refused frame's pages left their slots untouched
            final long slot = (long) (pages - 1 - i) * PAGE;
            if (i != outOfBounds) {
                assertThat(destination.asSlice(slot, PAGE).mismatch(arena.allocate(PAGE)))
                        .isEqualTo(-1);
            }
        }
    }

    @Test
    void aStaleKeyRefusesEveryPageOfTheBatchExactlyOnce() {
        final TcpDomain initiator = fixture.open(initiatorEvents, Map.of());
        final TcpDomain target = fixture.open(targetEvents, Map.of());
        final int pages = 600;
        final long rkey = target.register(arena.allocate((long) pages * PAGE), Device.host());
        target.deregister(rkey);

        writePages(initiator, target, rkey, pages, -1);
        pollUntil(() -> initiatorEvents.pagesEnded() == pages, initiator, target);

        assertThat(initiatorEvents.pagesCompleted).isZero();
        assertThat(initiatorEvents.failures).hasSize(pages).allSatisfy(e -> assertThat(e)
                .isInstanceOfSatisfying(RemoteAccessException.class, refused -> assertThat(refused.reason())
                        .isEqualTo(RemoteAccessException.Reason.UNKNOWN_KEY)));
        assertThat(initiatorEvents.failureReports).isEqualTo(pages / TcpPageFrames.pagesPerFrame(PAGE) + 1);
        assertThat(targetEvents.imms).isEmpty();
        assertThat(targetEvents.bytesReceived).isZero();
    }

    @Test
    void aPageOutsideTheSourceFailsAloneAndTheRestLand() {
        final TcpDomain initiator = fixture.open(initiatorEvents, Map.of());
        final TcpDomain target = fixture.open(targetEvents, Map.of());
        final MemorySegment source = arena.allocate(4L * PAGE);
        final long sourceKey = initiator.register(source, Device.host());
        final long rkey = target.register(arena.allocate(4L * PAGE), Device.host());
        final PageBatch batch = new PageBatch(8).token(TOKEN);
        batch.source(source, sourceKey, PAGE)
                .target(initiator.resolve(target.address()), 0, rkey)
                .imm(true, 3);
        batch.add(0, 0);
        batch.add(4L * PAGE - 16, PAGE); // runs past the source's end
        batch.add(PAGE, 2L * PAGE);

        initiator.writePages(batch);
        pollUntil(() -> initiatorEvents.pagesEnded() == 3 && targetEvents.imms.size() == 2, initiator, target);

        assertThat(initiatorEvents.failures).singleElement().isInstanceOf(RegionBoundsException.class);
        assertThat(initiatorEvents.pagesCompleted).isEqualTo(2);
        assertThat(targetEvents.imms).containsExactly(3, 3);
    }

    @Test
    void aCancelledBatchLeavesNothingAndReportsNothing() {
        final TcpDomain initiator = fixture.open(initiatorEvents, Map.of());
        final TcpDomain target = fixture.open(targetEvents, Map.of());
        final int pages = 1000;
        final MemorySegment destination = arena.allocate((long) pages * PAGE);
        final long rkey = target.register(destination, Device.host());

        writePages(initiator, target, rkey, pages, -1); // queued behind the connect
        initiator.cancel(TOKEN);
        final MemorySegment single = arena.allocate(8);
        final WriteDescriptor after = new WriteDescriptor()
                .token(6)
                .source(single, 0, initiator.register(single, Device.host()), 8)
                .target(initiator.resolve(target.address()), 0, 0, rkey)
                .imm(true, 9);
        initiator.write(after);
        pollUntil(() -> initiatorEvents.ended(6) && targetEvents.imms.size() == 1, initiator, target);

        assertThat(initiatorEvents.ended(TOKEN)).isFalse();
        assertThat(targetEvents.imms).containsExactly(9);
        assertThat(targetEvents.bytesReceived).isEqualTo(8);
    }

    /**
     * Cancelled after some of its frames left (the target not reading yet): what left lands and is reported, what
     * had not left never leaves and is never reported, and no page is reported twice.
     */
    @Test
    void aBatchCancelledMidwayReportsExactlyThePagesThatLanded() {
        final TcpDomain initiator = fixture.open(initiatorEvents, Map.of());
        final TcpDomain target = fixture.open(targetEvents, Map.of());
        final int pages = 20_000; // 20 MiB: more than the socket buffers hold while the target does not read
        final MemorySegment destination = arena.allocate((long) pages * PAGE);
        final long rkey = target.register(destination, Device.host());
        writePages(initiator, target, rkey, pages, -1);
        pollUntil(() -> !targetEvents.imms.isEmpty(), initiator, target); // connected, the first frame landed
        for (int i = 0; i < 100; i++) {
            initiator.poll(); // sends what the socket takes; the target reads nothing meanwhile
        }

        initiator.cancel(TOKEN);
        final MemorySegment single = arena.allocate(8);
        initiator.write(new WriteDescriptor()
                .token(6)
                .source(single, 0, initiator.register(single, Device.host()), 8)
                .target(initiator.resolve(target.address()), 0, 0, rkey)
                .imm(true, 9));
        pollUntil(() -> initiatorEvents.ended(6), initiator, target);

        final int landed = targetEvents.imms.size() - 1;
        assertThat(landed).isBetween(1, pages - 1);
        assertThat(initiatorEvents.failures).isEmpty();
        assertThat(initiatorEvents.pagesCompleted).isEqualTo(landed + 1);
        assertThat(targetEvents.bytesReceived).isEqualTo((long) landed * PAGE + 8);
    }

    @Test
    void aBatchBeyondTheQueueBoundIsRefusedWholeAtOnce() {
        final TcpDomain initiator = fixture.open(initiatorEvents, Map.of(TcpSettings.MAX_QUEUED_PER_PEER, "1"));
        final TcpDomain target = fixture.open(targetEvents, Map.of());
        final int pages = 600;
        final long rkey = target.register(arena.allocate((long) pages * PAGE), Device.host());
        final MemorySegment single = arena.allocate(8);
        final WriteDescriptor first = new WriteDescriptor()
                .token(4)
                .source(single, 0, initiator.register(single, Device.host()), 8)
                .target(initiator.resolve(target.address()), 0, 0, rkey);
        initiator.write(first); // queued behind the connect: the one request the bound allows

        writePages(initiator, target, rkey, pages, -1);

        assertThat(initiatorEvents.failures).hasSize(pages).allSatisfy(e -> assertThat(e)
                .isInstanceOf(BackPressureException.class));
        pollUntil(() -> initiatorEvents.ended(4), initiator, target);
        assertThat(initiatorEvents.completed).containsOnlyKeys(4L);
        assertThat(targetEvents.imms).isEmpty();
    }

    @Test
    void withoutPageTablesABatchGoesPageByPageAndARefusedPageFailsAlone() {
        final TcpDomain initiator = fixture.open(initiatorEvents, Map.of());
        final TcpDomain target = fixture.open(targetEvents, Map.of(TcpSettings.PAGE_TABLES, "false"));
        final int pages = 300;
        final MemorySegment destination = arena.allocate((long) pages * PAGE);
        final long rkey = target.register(destination, Device.host());

        final MemorySegment source = writePages(initiator, target, rkey, pages, 10);
        pollUntil(() -> initiatorEvents.pagesEnded() == pages, initiator, target);

        assertThat(initiatorEvents.failures).singleElement().isInstanceOf(RemoteAccessException.class);
        assertThat(initiatorEvents.pagesCompleted).isEqualTo(pages - 1);
        assertThat(targetEvents.imms).hasSize(pages - 1);
        final MemorySegment landed = destination.asSlice((long) (pages - 1) * PAGE, PAGE);
        assertThat(landed.mismatch(source.asSlice(0, PAGE))).isEqualTo(-1);
    }

    /**
     * Posts {@code pages} pages of one batch with imm 77, page i to slot pages - 1 - i of {@code rkey}; page
     * {@code outOfBounds} (or none, -1) to one past the region's end instead. Returns the source.
     */
    private MemorySegment writePages(
            final TcpDomain initiator,
            final TcpDomain target,
            final long rkey,
            final int pages,
            final int outOfBounds) {
        final MemorySegment source = TcpPageFixture.pattern(arena, (long) pages * PAGE);
        final long sourceKey = initiator.register(source, Device.host());
        final PageBatch batch = new PageBatch(pages).token(TOKEN);
        batch.source(source, sourceKey, PAGE)
                .target(initiator.resolve(target.address()), 0, rkey)
                .imm(true, 77);
        for (int i = 0; i < pages; i++) {
            batch.add((long) i * PAGE, TcpPageFixture.target(i, pages, PAGE, outOfBounds));
        }
        initiator.writePages(batch);
        batch.clear();
        return source;
    }
}
