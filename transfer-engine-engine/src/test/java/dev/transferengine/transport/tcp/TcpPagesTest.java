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

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

/** The pages of a paged write as WRITEV frames: what the receiver sees is k writes, k imms and k answers. */
class TcpPagesTest {

    private static final int PAGE = 1024;

    /** Counts every page's completion (pages of one request share its token) and keeps each failure. */
    private static final class PageListener extends RecordingDomainListener {
        int pagesCompleted;
        long bytesCompleted;
        /** How many reports the completions came in: runs of pages answered together come in one. */
        int completionReports;

        final List<TransferEngineException> failures = new ArrayList<>();

        @Override
        public void onComplete(final long token, final long bytes, final int pieces) {
            completionReports++;
            completionReports -= pieces; // the default below counts each piece as a report of its own
            super.onComplete(token, bytes, pieces);
        }

        @Override
        public void onComplete(final long token, final long bytes) {
            completionReports++;
            pagesCompleted++;
            bytesCompleted += bytes;
            super.onComplete(token, bytes);
        }

        @Override
        public void onFailed(final long token, final TransferEngineException error) {
            failures.add(error);
            super.onFailed(token, error);
        }
    }

    /** Counts the reports the imm events came in: the pages of a run with one imm come in one. */
    private static final class ImmReports extends RecordingDomainListener {
        int reports;

        @Override
        public void onImm(final long reservation) {
            reports++;
            super.onImm(reservation);
        }

        @Override
        public void onImms(final long reservation, final int count) {
            reports -= count - 1; // the default below calls onImm count times
            super.onImms(reservation, count);
        }
    }

    private final Arena arena = Arena.ofShared();
    private final PageListener initiatorEvents = new PageListener();
    private final ImmReports targetEvents = new ImmReports();
    private final RecordingDomainListener secondEvents = new RecordingDomainListener();
    private final TcpDomain initiator = TcpDomains.open(initiatorEvents);
    private final TcpDomain target = TcpDomains.open(targetEvents);
    private final TcpDomain second = TcpDomains.open(secondEvents);

    @AfterEach
    void close() {
        initiator.close();
        target.close();
        second.close();
        arena.close();
    }

    @Test
    void pagesOfOneRequestToTwoPeersLandWhereTheirPageTablesSayWithOneImmPerPage() {
        final int pages = 600; // more than one WRITEV frame holds, interleaved between two peers
        final MemorySegment source = TcpPageFixture.pattern(arena, pages * PAGE);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment first = arena.allocate((long) pages * PAGE);
        final MemorySegment other = arena.allocate((long) pages * PAGE);
        final long firstKey = target.register(first, Device.host());
        final long otherKey = second.register(other, Device.host());
        final long firstPeer = initiator.resolve(target.address());
        final long otherPeer = initiator.resolve(second.address());

        final WriteDescriptor page = new WriteDescriptor().token(5);
        for (int i = 0; i < pages; i++) {
            final int slot = (i * 7) % pages; // a scattered page table
            final boolean toFirst = i % 3 != 0;
            page.source(source, (long) i * PAGE, sourceKey, PAGE)
                    .target(toFirst ? firstPeer : otherPeer, 0, (long) slot * PAGE, toFirst ? firstKey : otherKey)
                    .imm(true, i);
            initiator.write(page);
        }
        pollUntil(() -> initiatorEvents.pagesCompleted == pages, initiator, target, second);

        assertThat(initiatorEvents.failures).isEmpty();
        assertThat(initiatorEvents.bytesCompleted).isEqualTo((long) pages * PAGE);
        for (int i = 0; i < pages; i++) {
            final int slot = (i * 7) % pages;
            final MemorySegment landed = (i % 3 != 0 ? first : other).asSlice((long) slot * PAGE, PAGE);
            assertThat(landed.mismatch(source.asSlice((long) i * PAGE, PAGE))).isEqualTo(-1);
        }
        assertThat(targetEvents.imms.size() + secondEvents.imms.size()).isEqualTo(pages);
        assertThat(secondEvents.imms).hasSize(pages / 3).allMatch(imm -> imm % 3 == 0);
        assertThat(targetEvents.bytesReceived + secondEvents.bytesReceived).isEqualTo((long) pages * PAGE);
    }

    @Test
    void aRunOfPagesWithOneImmIsReportedTogetherYetCountsOneImmAndOneCompletionPerPage() {
        final int pages = 4096;
        final MemorySegment source = TcpPageFixture.pattern(arena, pages * PAGE);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment destination = arena.allocate((long) pages * PAGE);
        final long rkey = target.register(destination, Device.host());
        final long peer = initiator.resolve(target.address());

        final WriteDescriptor page = new WriteDescriptor().token(11);
        for (int i = 0; i < pages; i++) {
            page.source(source, (long) i * PAGE, sourceKey, PAGE)
                    .target(peer, 0, (long) (pages - 1 - i) * PAGE, rkey)
                    .imm(true, 77);
            initiator.write(page);
        }
        pollUntil(() -> initiatorEvents.pagesCompleted == pages, initiator, target);

        assertThat(initiatorEvents.failures).isEmpty();
        assertThat(initiatorEvents.bytesCompleted).isEqualTo((long) pages * PAGE);
        assertThat(targetEvents.imms).hasSize(pages).containsOnly(77);
        assertThat(targetEvents.bytesReceived).isEqualTo((long) pages * PAGE);
        // one report per run of pages, never one per page: a WRITEV frame holds many 1 KiB pages
        assertThat(targetEvents.reports).isBetween(1, pages / 4);
        assertThat(initiatorEvents.completionReports).isBetween(1, pages / 4);
        for (int i = 0; i < pages; i++) {
            final MemorySegment landed = destination.asSlice((long) (pages - 1 - i) * PAGE, PAGE);
            assertThat(landed.mismatch(source.asSlice((long) i * PAGE, PAGE))).isEqualTo(-1);
        }
    }

    @Test
    void aRefusedPageFailsAloneAndLeavesItsTargetUntouched() {
        final int pages = 64;
        final MemorySegment source = TcpPageFixture.pattern(arena, pages * PAGE);
        final long sourceKey = initiator.register(source, Device.host());
        final MemorySegment destination = arena.allocate((long) (pages + 1) * PAGE);
        final long rkey = target.register(destination, Device.host());
        final long peer = initiator.resolve(target.address());

        final WriteDescriptor page = new WriteDescriptor().token(9);
        for (int i = 0; i < pages; i++) {
            final long at = i == 10 ? (long) pages * PAGE + PAGE / 2 : (long) i * PAGE; // page 10 overruns the region
            page.source(source, (long) i * PAGE, sourceKey, PAGE)
                    .target(peer, 0, at, rkey)
                    .imm(true, i);
            initiator.write(page);
        }
        pollUntil(() -> initiatorEvents.pagesCompleted + initiatorEvents.failures.size() == pages, initiator, target);

        assertThat(initiatorEvents.pagesCompleted).isEqualTo(pages - 1);
        assertThat(initiatorEvents.failures)
                .singleElement()
                .isInstanceOfSatisfying(RemoteAccessException.class, e -> assertThat(e.reason())
                        .isEqualTo(RemoteAccessException.Reason.OUT_OF_BOUNDS));
        assertThat(targetEvents.imms).hasSize(pages - 1).doesNotContain(10);
        assertThat(destination.asSlice((long) pages * PAGE).mismatch(arena.allocate(PAGE)))
                .isEqualTo(-1);
        assertThat(destination.asSlice(10L * PAGE, PAGE).mismatch(arena.allocate(PAGE)))
                .isEqualTo(-1);
        assertThat(destination.asSlice(11L * PAGE, PAGE).mismatch(source.asSlice(11L * PAGE, PAGE)))
                .isEqualTo(-1);
    }

    @Test
    void aWritevFrameIsPlacedPageByPageAndAnsweredByOneAckPerRunOfAcceptedPages() throws IOException {
        final MemorySegment destination = arena.allocate(8 * PAGE);
        final long rkey = target.register(destination, Device.host());
        final long[] offsets = {3 * PAGE, 0, 8 * PAGE - 1, 5 * PAGE, PAGE};
        final int[] lengths = {PAGE, 16, 8, 0, 100}; // the third overruns the region
        try (RawPeer raw = new RawPeer(target)) {
            raw.authenticate(target).send(writev(TcpFrame.WRITEV_IMM, 40, rkey, offsets, lengths));
            pollUntil(() -> raw.receivedBytes() >= 3 * TcpFrame.HEADER_LENGTH, target);

            final TcpFrame acks = raw.answer(0);
            assertThat(acks.type()).isEqualTo(TcpFrame.ACK);
            assertThat(acks.token()).isEqualTo(40);
            assertThat(acks.aux()).isEqualTo(2);
            assertThat(acks.length()).isEqualTo(PAGE + 16);
            final TcpFrame refusal = raw.answer(1);
            assertThat(refusal.type()).isEqualTo(TcpFrame.NACK);
            assertThat(refusal.token()).isEqualTo(42);
            assertThat(refusal.aux()).isEqualTo(TcpRefusal.OUT_OF_BOUNDS.code());
            final TcpFrame rest = raw.answer(2);
            assertThat(rest.type()).isEqualTo(TcpFrame.ACK);
            assertThat(rest.token()).isEqualTo(43);
            assertThat(rest.aux()).isEqualTo(2);
            assertThat(targetEvents.imms).containsExactly(100, 101, 103, 104);
            assertThat(targetEvents.bytesReceived).isEqualTo(PAGE + 16 + 100);
            assertThat(destination.get(ValueLayout.JAVA_BYTE, 3 * PAGE)).isEqualTo((byte) 1);
            assertThat(destination.get(ValueLayout.JAVA_BYTE, PAGE + 99)).isEqualTo((byte) 5);
            assertThat(destination.get(ValueLayout.JAVA_BYTE, 8 * PAGE - 1)).isZero();
            assertThat(raw.closedByPeer()).isFalse();
        }
    }

    @Test
    void aWritevFrameWhosePagesOverrunItClosesTheConnection() throws IOException {
        final long rkey = target.register(arena.allocate(8 * PAGE), Device.host());
        final ByteBuffer frame = writev(TcpFrame.WRITEV, 1, rkey, new long[] {0, PAGE}, new int[] {16, 16});
        frame.putInt(TcpFrame.HEADER_LENGTH + Long.BYTES, 64); // the first page claims more than the frame holds
        try (RawPeer raw = new RawPeer(target)) {
            raw.authenticate(target).send(frame);
            pollUntil(raw::closedByPeer, target);
        }
        assertThat(TcpDomains.count(target, TcpCounter.MALFORMED_FRAMES)).isEqualTo(1);
        assertThat(targetEvents.bytesReceived).isZero();
    }

    /** A WRITEV frame of pages at {@code offsets} of {@code lengths}, page i filled with i + 1, imm 100 + i. */
    private static ByteBuffer writev(
            final byte type, final long firstId, final long rkey, final long[] offsets, final int[] lengths) {
        int bytes = 0;
        for (final int length : lengths) {
            bytes += TcpFrame.PAGE_HEADER_LENGTH + length;
        }
        final ByteBuffer frame =
                ByteBuffer.allocate(TcpFrame.HEADER_LENGTH + bytes).order(ByteOrder.LITTLE_ENDIAN);
        new TcpFrame(frame).encode(type, 0, offsets.length, firstId, rkey, 0, bytes);
        frame.position(TcpFrame.HEADER_LENGTH);
        for (int i = 0; i < offsets.length; i++) {
            frame.putLong(offsets[i]).putInt(lengths[i]).putInt(100 + i);
            for (int b = 0; b < lengths[i]; b++) {
                frame.put((byte) (i + 1));
            }
        }
        return frame.flip();
    }
}
