package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pages of a paged write as PAGES frames (feature {@link TcpFrame#FEATURE_PAGE_TABLE}): a page table, then the
 * pages, admitted whole or refused whole; k pages still land as k writes with k imm events and k answers.
 */
class TcpPageTableTest {

    private static final int PAGE = 1024;

    /** Counts completions and failures per page, and the reports the imm events came in. */
    private static final class Events extends RecordingDomainListener {
        int pagesCompleted;
        int immReports;
        final List<TransferEngineException> failures = new ArrayList<>();

        @Override
        public void onComplete(final long token, final long bytes) {
            pagesCompleted++;
            super.onComplete(token, bytes);
        }

        @Override
        public void onFailed(final long token, final TransferEngineException error) {
            failures.add(error);
            super.onFailed(token, error);
        }

        @Override
        public void onImm(final long reservation) {
            immReports++;
            super.onImm(reservation);
        }

        @Override
        public void onImms(final long reservation, final int count) {
            immReports -= count - 1; // the default below calls onImm count times
            super.onImms(reservation, count);
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

    private TcpDomain open(final Events events, final boolean pageTables) {
        return fixture.open(events, Map.of(TcpSettings.PAGE_TABLES, Boolean.toString(pageTables)));
    }

    @Test
    void aFrameWithOneOutOfBoundsPageIsRefusedWholeAndLeavesEveryPageUntouched() {
        final TcpDomain initiator = open(initiatorEvents, true);
        final TcpDomain target = open(targetEvents, true);
        final int pages = 64;
        final MemorySegment destination = arena.allocate((long) (pages + 1) * PAGE);
        final long rkey = target.register(destination, Device.host());

        writePages(initiator, target, rkey, pages, 10);
        pollUntil(() -> initiatorEvents.pagesCompleted + initiatorEvents.failures.size() == pages, initiator, target);

        assertThat(initiatorEvents.pagesCompleted).isZero();
        assertThat(initiatorEvents.failures).hasSize(pages).allSatisfy(e -> assertThat(e)
                .isInstanceOfSatisfying(RemoteAccessException.class, refused -> assertThat(refused.reason())
                        .isEqualTo(RemoteAccessException.Reason.OUT_OF_BOUNDS)));
        assertThat(targetEvents.imms).isEmpty();
        assertThat(targetEvents.bytesReceived).isZero();
        assertThat(destination.mismatch(arena.allocate(destination.byteSize()))).isEqualTo(-1);
    }

    @Test
    void aStaleKeyRefusesEveryPageOfTheFrame() {
        final TcpDomain initiator = open(initiatorEvents, true);
        final TcpDomain target = open(targetEvents, true);
        final int pages = 32;
        final long rkey = target.register(arena.allocate((long) pages * PAGE), Device.host());
        target.deregister(rkey);

        writePages(initiator, target, rkey, pages, -1);
        pollUntil(() -> initiatorEvents.failures.size() == pages, initiator, target);

        assertThat(initiatorEvents.failures).allSatisfy(e -> assertThat(e)
                .isInstanceOfSatisfying(RemoteAccessException.class, refused -> assertThat(refused.reason())
                        .isEqualTo(RemoteAccessException.Reason.UNKNOWN_KEY)));
        assertThat(targetEvents.imms).isEmpty();
    }

    @Test
    void pagesBeyondOneFrameGoAsSeveralFramesAndCountExactlyOneImmPerPage() {
        final TcpDomain initiator = open(initiatorEvents, true);
        final TcpDomain target = open(targetEvents, true);
        final int pages = 1000; // about four frames of the 256 KiB write buffer
        final MemorySegment destination = arena.allocate((long) pages * PAGE);
        final long rkey = target.register(destination, Device.host());

        final MemorySegment source = writePages(initiator, target, rkey, pages, -1);
        pollUntil(
                () -> initiatorEvents.pagesCompleted == pages && targetEvents.imms.size() == pages, initiator, target);

        assertThat(initiatorEvents.failures).isEmpty();
        assertThat(targetEvents.imms).hasSize(pages).containsOnly(77);
        assertThat(targetEvents.bytesReceived).isEqualTo((long) pages * PAGE);
        assertThat(targetEvents.immReports).isBetween(4, pages / 100); // one report per frame, not one per page
        for (int i = 0; i < pages; i++) {
            final MemorySegment landed = destination.asSlice((long) (pages - 1 - i) * PAGE, PAGE);
            assertThat(landed.mismatch(source.asSlice((long) i * PAGE, PAGE))).isEqualTo(-1);
        }
    }

    /** An engine without the feature on either side gets WRITEV frames, whose pages are refused one by one. */
    @ParameterizedTest(name = "page tables at the initiator: {0}")
    @ValueSource(booleans = {true, false})
    void withoutTheFeatureOnOneSidePagesGoAsWritevAndARefusedPageFailsAlone(final boolean initiatorTables) {
        final TcpDomain initiator = open(initiatorEvents, initiatorTables);
        final TcpDomain target = open(targetEvents, !initiatorTables);
        final int pages = 64;
        final MemorySegment destination = arena.allocate((long) (pages + 1) * PAGE);
        final long rkey = target.register(destination, Device.host());

        writePages(initiator, target, rkey, pages, 10);
        pollUntil(() -> initiatorEvents.pagesCompleted + initiatorEvents.failures.size() == pages, initiator, target);

        assertThat(initiatorEvents.pagesCompleted).isEqualTo(pages - 1);
        assertThat(initiatorEvents.failures).singleElement().isInstanceOf(RemoteAccessException.class);
        assertThat(targetEvents.imms).hasSize(pages - 1);
        assertThat(targetEvents.immReports).isLessThan(pages / 4);
    }

    @Test
    void aPagesImmFrameCountsExactlyItsPagesInOneReportAndIsAnsweredByOneAck() throws IOException {
        final TcpDomain target = open(targetEvents, true);
        final MemorySegment destination = arena.allocate(8 * PAGE);
        final long rkey = target.register(destination, Device.host());
        final long[] offsets = {3 * PAGE, 0, 5 * PAGE, PAGE, 7 * PAGE};
        final int[] lengths = {PAGE, 16, 0, 100, 8};
        try (RawPeer raw = new RawPeer(target)) {
            raw.features(TcpFrame.FEATURE_PAGE_TABLE).authenticate(target);
            raw.send(pagesFrame(TcpFrame.PAGES_IMM, 42, 40, rkey, offsets, lengths));
            pollUntil(() -> raw.receivedBytes() >= TcpFrame.HEADER_LENGTH, target);

            final TcpFrame ack = raw.answer(0);
            assertThat(ack.type()).isEqualTo(TcpFrame.ACK);
            assertThat(ack.token()).isEqualTo(40);
            assertThat(ack.aux()).isEqualTo(5);
            assertThat(ack.length()).isEqualTo(PAGE + 16 + 100 + 8);
            assertThat(targetEvents.imms).containsExactly(42, 42, 42, 42, 42);
            assertThat(targetEvents.immReports).isEqualTo(1);
            assertThat(targetEvents.bytesReceived).isEqualTo(PAGE + 16 + 100 + 8);
            assertThat(destination.get(ValueLayout.JAVA_BYTE, 3 * PAGE + PAGE - 1))
                    .isEqualTo((byte) 1);
            assertThat(destination.get(ValueLayout.JAVA_BYTE, 15)).isEqualTo((byte) 2);
            assertThat(destination.get(ValueLayout.JAVA_BYTE, PAGE + 99)).isEqualTo((byte) 4);
            assertThat(destination.get(ValueLayout.JAVA_BYTE, 7 * PAGE + 7)).isEqualTo((byte) 5);
        }
    }

    @Test
    void aRefusedPagesFrameIsAnsweredByOneNackForAllItsPagesAndTheNextFrameLands() throws IOException {
        final TcpDomain target = open(targetEvents, true);
        final MemorySegment destination = arena.allocate(8 * PAGE);
        final long rkey = target.register(destination, Device.host());
        final long[] offsets = {0, 2 * PAGE, 8 * PAGE - 4};
        final int[] lengths = {PAGE, PAGE, 8}; // the third overruns the region
        try (RawPeer raw = new RawPeer(target)) {
            raw.features(TcpFrame.FEATURE_PAGE_TABLE).authenticate(target);
            raw.send(pagesFrame(TcpFrame.PAGES_IMM, 9, 1, rkey, offsets, lengths));
            raw.send(pagesFrame(TcpFrame.PAGES, 0, 4, rkey, new long[] {4 * PAGE}, new int[] {PAGE}));
            pollUntil(() -> raw.receivedBytes() >= 2 * TcpFrame.HEADER_LENGTH, target);

            final TcpFrame nack = raw.answer(0);
            assertThat(nack.type()).isEqualTo(TcpFrame.NACK);
            assertThat(nack.token()).isEqualTo(1);
            assertThat(nack.imm()).isEqualTo(3);
            assertThat(nack.aux()).isEqualTo(TcpRefusal.OUT_OF_BOUNDS.code());
            final TcpFrame ack = raw.answer(1);
            assertThat(ack.type()).isEqualTo(TcpFrame.ACK);
            assertThat(ack.token()).isEqualTo(4);
            assertThat(ack.aux()).isEqualTo(1);
            assertThat(targetEvents.imms).isEmpty();
            assertThat(destination.asSlice(0, 4 * PAGE).mismatch(arena.allocate(4 * PAGE)))
                    .isEqualTo(-1);
            assertThat(destination.get(ValueLayout.JAVA_BYTE, 4 * PAGE)).isEqualTo((byte) 1);
            assertThat(raw.closedByPeer()).isFalse();
        }
    }

    @Test
    void aPagesFrameFromAPeerThatDidNotAnnounceTheFeatureClosesTheConnection() throws IOException {
        final TcpDomain target = open(targetEvents, true);
        final long rkey = target.register(arena.allocate(8 * PAGE), Device.host());
        try (RawPeer raw = new RawPeer(target)) {
            raw.authenticate(target).send(pagesFrame(TcpFrame.PAGES, 0, 1, rkey, new long[] {0}, new int[] {16}));
            pollUntil(raw::closedByPeer, target);
        }
        assertThat(TcpDomains.count(target, TcpCounter.MALFORMED_FRAMES)).isEqualTo(1);
        assertThat(targetEvents.bytesReceived).isZero();
    }

    @Test
    void aPagesFrameWhoseTableDisagreesWithItsLengthClosesTheConnection() throws IOException {
        final TcpDomain target = open(targetEvents, true);
        final long rkey = target.register(arena.allocate(8 * PAGE), Device.host());
        final ByteBuffer frame = pagesFrame(TcpFrame.PAGES, 0, 1, rkey, new long[] {0, PAGE}, new int[] {16, 16});
        frame.putInt(TcpFrame.HEADER_LENGTH + Long.BYTES, 64); // the first page claims more than the frame holds
        try (RawPeer raw = new RawPeer(target)) {
            raw.features(TcpFrame.FEATURE_PAGE_TABLE).authenticate(target).send(frame);
            pollUntil(raw::closedByPeer, target);
        }
        assertThat(TcpDomains.count(target, TcpCounter.MALFORMED_FRAMES)).isEqualTo(1);
        assertThat(targetEvents.bytesReceived).isZero();
    }

    /**
     * Posts {@code pages} pages of one request with imm 77, page i to slot pages - 1 - i of {@code rkey}; page
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
        final long peer = initiator.resolve(target.address());
        final WriteDescriptor page = new WriteDescriptor().token(5);
        for (int i = 0; i < pages; i++) {
            page.source(source, (long) i * PAGE, sourceKey, PAGE)
                    .target(peer, 0, TcpPageFixture.target(i, pages, PAGE, outOfBounds), rkey)
                    .imm(true, 77);
            initiator.write(page);
        }
        return source;
    }

    /** A PAGES or PAGES_IMM frame of pages at {@code offsets} of {@code lengths}, page i filled with i + 1. */
    private static ByteBuffer pagesFrame(
            final byte type,
            final int imm,
            final long firstId,
            final long rkey,
            final long[] offsets,
            final int[] lengths) {
        int bytes = offsets.length * TcpFrame.PAGE_ENTRY_LENGTH;
        for (final int length : lengths) {
            bytes += length;
        }
        final ByteBuffer frame =
                ByteBuffer.allocate(TcpFrame.HEADER_LENGTH + bytes).order(ByteOrder.LITTLE_ENDIAN);
        new TcpFrame(frame).encode(type, imm, offsets.length, firstId, rkey, 0, bytes);
        frame.position(TcpFrame.HEADER_LENGTH);
        for (int i = 0; i < offsets.length; i++) {
            frame.putLong(offsets[i]).putInt(lengths[i]);
        }
        for (int i = 0; i < offsets.length; i++) {
            for (int b = 0; b < lengths[i]; b++) {
                frame.put((byte) (i + 1));
            }
        }
        return frame.flip();
    }
}
