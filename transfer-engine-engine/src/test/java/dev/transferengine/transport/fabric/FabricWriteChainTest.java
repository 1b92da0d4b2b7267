package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * shm's write chains (see {@link FabricDomain}): the pages of one paged write go transmit-complete but for the ones
 * bounding their remote range (only the last page where the target publishes its keys, as here), and the request still completes only once every page is at the target and never
 * when the target refused one. A request here is what the engine makes of a paged write on one NIC: one
 * {@link Domain#write} per page, all with the request's token, done once every page reported done.
 */
class FabricWriteChainTest {

    private static final int PAGE = 1024;
    private static final int PAGES = 64;
    /** Requests in flight at once in the test that keeps a window of them. */
    private static final int REQUESTS = 16;

    private static final long TOKEN = 42;
    private static final int IMM = 9;
    /** Passes over both domains after which a write the target refused is taken as never completing. */
    private static final int SETTLE_POLLS = 5000;

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        fixture.close();
        arena.close();
    }

    /** Counts each token's successful completions, as the engine counts a request's pieces, and the reports of them. */
    private static final class PieceListener extends RecordingDomainListener {
        final Map<Long, Integer> pieces = new HashMap<>();
        final Map<Long, Integer> reports = new HashMap<>();
        final List<TransferEngineException> failures = new ArrayList<>();

        @Override
        public void onComplete(final long token, final long bytes, final int count) {
            reports.merge(token, 1, Integer::sum);
            for (int i = 0; i < count; i++) {
                super.onComplete(token, bytes / count);
                pieces.merge(token, 1, Integer::sum);
            }
        }

        @Override
        public void onFailed(final long token, final TransferEngineException error) {
            super.onFailed(token, error);
            failures.add(error);
        }

        @Override
        public void onComplete(final long token, final long bytes) {
            super.onComplete(token, bytes);
            pieces.merge(token, 1, Integer::sum);
            reports.merge(token, 1, Integer::sum);
        }

        int completed(final long token) {
            return pieces.getOrDefault(token, 0);
        }
    }

    /** An initiator and a target NIC on shm, a source of {@link #PAGES} patterned pages and a zeroed target. */
    private final class Pair {
        final PieceListener initiatorEvents = new PieceListener();
        final FabricDomain initiator;
        final FabricDomain target;
        final long peer;
        final MemorySegment src = arena.allocate((long) REQUESTS * PAGES * PAGE, 4096);
        final MemorySegment dst = arena.allocate((long) REQUESTS * PAGES * PAGE, 4096);
        final long srcKey;

        Pair(final RecordingDomainListener targetEvents) {
            FabricFixture.assumeAvailable("shm");
            initiator = (FabricDomain) fixture.open(FabricFixture.config("shm", 1, Map.of()), 0, initiatorEvents);
            target = (FabricDomain) fixture.open(FabricFixture.config("shm", 1, Map.of()), 0, targetEvents);
            peer = initiator.resolve(target.address());
            for (long i = 0; i < src.byteSize(); i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
            }
            srcKey = initiator.register(src, Device.host());
        }

        /** Writes page {@code page} of the source to the same page of the target region {@code dstKey}, with imm. */
        void writePage(final int page, final long dstKey) {
            writePage(TOKEN, page, dstKey);
        }

        void writePage(final long token, final int page, final long dstKey) {
            initiator.write(new WriteDescriptor()
                    .token(token)
                    .source(src, (long) page * PAGE, srcKey, PAGE)
                    .target(peer, dst.address(), (long) page * PAGE, dstKey)
                    .imm(true, IMM));
        }

        void writePages(final long dstKey) {
            for (int page = 0; page < PAGES; page++) {
                writePage(page, dstKey);
            }
        }

        boolean placed(final int page) {
            return dst.asSlice((long) page * PAGE, PAGE).mismatch(src.asSlice((long) page * PAGE, PAGE)) == -1;
        }

        int pagesPlaced() {
            int placed = 0;
            for (int page = 0; page < PAGES; page++) {
                if (placed(page)) {
                    placed++;
                }
            }
            return placed;
        }

        boolean untouched(final int page) {
            return dst.asSlice((long) page * PAGE, PAGE).mismatch(arena.allocate(PAGE)) == -1;
        }

        void settle() {
            for (int i = 0; i < SETTLE_POLLS && initiatorEvents.completed(TOKEN) < PAGES; i++) {
                fixture.pollAll();
            }
        }
    }

    @Test
    void onlyShmWithDeliveryCompleteWritesChainsWrites() {
        FabricFixture.assumeAvailable("shm");
        final RecordingDomainListener events = new RecordingDomainListener();
        assertThat(((FabricDomain) fixture.open("shm", 0, events)).chainsWrites())
                .as("shm asks for FI_ORDER_WAW and gets it")
                .isTrue();
        assertThat(((FabricDomain) fixture.open(
                                FabricFixture.config(
                                        "shm", 1, Map.of(FabricTransport.DELIVERY_COMPLETE_OPTION, "false")),
                                0,
                                events))
                        .chainsWrites())
                .as("every write is transmit-complete anyway")
                .isFalse();
        FabricFixture.assumeAvailable("tcp");
        assertThat(((FabricDomain) fixture.open("tcp", 0, events)).chainsWrites())
                .isFalse();
    }

    @Test
    void aPagedWriteWithImmCompletesWithEveryPageInPlaceAndRaisesEachImmOnlyAfterItsPage() {
        final int[] immsBeforeTheirPage = new int[1];
        final Pair[] self = new Pair[1];
        final RecordingDomainListener targetEvents = new RecordingDomainListener() {
            @Override
            public void onImm(final long reservation) {
                super.onImm(reservation);
                // The n-th imm of the request may only be seen once at least n of its pages are in place.
                if (self[0].pagesPlaced() < imms.size()) {
                    immsBeforeTheirPage[0]++;
                }
            }
        };
        final Pair pair = new Pair(targetEvents);
        self[0] = pair;
        final long dstKey = pair.target.register(pair.dst, Device.host());

        pair.writePages(dstKey);
        fixture.pollUntil(() -> pair.initiatorEvents.completed(TOKEN) == PAGES && targetEvents.imms.size() == PAGES);

        assertThat(pair.initiatorEvents.failed).isEmpty();
        assertThat(immsBeforeTheirPage[0])
                .as("imms seen before their page was in place")
                .isZero();
        assertThat(pair.pagesPlaced()).isEqualTo(PAGES);
        assertThat(targetEvents.imms).containsOnly(IMM);
        assertThat(pair.initiator.outstanding()).isZero();
    }

    /**
     * A chain's inner pages go as injects without a completion entry: they hold no operation slot once posted, but are
     * reported done only with the chain's delivery-complete write, in one report just before that write's own. The
     * target publishes its keys, so every page was checked against its region before posting and only the last page
     * goes delivery-complete: it stays outstanding until the target handled it, and the request with it.
     */
    @Test
    void theInnerPagesOfAChainHoldNoSlotAndAreReportedInOneReportWithTheLastPage() {
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final Pair pair = new Pair(targetEvents);
        final long dstKey = pair.target.register(pair.dst, Device.host());
        // shm turns posts away until it has mapped the peer's region: one write first, done before the request
        pair.writePage(TOKEN + 1, 0, dstKey);
        fixture.pollUntil(() -> pair.initiatorEvents.completed(TOKEN + 1) == 1 && pair.initiator.outstanding() == 0);

        pair.writePages(dstKey);
        pair.initiator.poll();

        assertThat(pair.initiatorEvents.completed(TOKEN))
                .as("pages reported done before the target polled")
                .isZero();
        assertThat(pair.initiator.outstanding()).as("operations still held").isEqualTo(1);

        fixture.pollUntil(
                () -> pair.initiatorEvents.completed(TOKEN) == PAGES && targetEvents.imms.size() == PAGES + 1);
        assertThat(pair.initiatorEvents.reports.get(TOKEN))
                .as("reports of them: the held pages, then the last page")
                .isEqualTo(2);
        assertThat(pair.initiatorEvents.failed).isEmpty();
        assertThat(pair.pagesPlaced()).isEqualTo(PAGES);
        assertThat(pair.initiator.outstanding()).isZero();
    }

    /**
     * One page in the middle of a request reaches past the target's region: it is refused before posting and fails
     * alone, with the reason; every other page lands and completes, and the target counts exactly their imms, in
     * fewer reports than imms (one per run of equal reservations read from its CQ).
     */
    @Test
    void aRequestWhoseMiddlePageIsRefusedFailsExactlyThatPageAndLandsTheOthers() {
        final int[] immReports = new int[1];
        final RecordingDomainListener targetEvents = new RecordingDomainListener() {
            @Override
            public void onImms(final long reservation, final int count) {
                immReports[0]++;
                for (int i = 0; i < count; i++) {
                    super.onImm(reservation);
                }
            }

            @Override
            public void onImm(final long reservation) {
                immReports[0]++;
                super.onImm(reservation);
            }
        };
        final Pair pair = new Pair(targetEvents);
        final long dstKey = pair.target.register(pair.dst.asSlice(0, (long) (PAGES - 1) * PAGE), Device.host());
        final int stray = PAGES - 1;

        int next = 0;
        for (int i = 0; i < PAGES; i++) {
            pair.writePage(i == PAGES / 2 ? stray : next++, dstKey);
        }
        fixture.pollUntil(() -> pair.initiatorEvents.completed(TOKEN) == PAGES - 1
                && targetEvents.imms.size() == PAGES - 1
                && pair.initiator.outstanding() == 0);

        assertThat(pair.initiatorEvents.failures).singleElement().satisfies(e -> assertThat(e)
                .isInstanceOfSatisfying(RemoteAccessException.class, refused -> assertThat(refused.reason())
                        .isEqualTo(RemoteAccessException.Reason.OUT_OF_BOUNDS)));
        assertThat(pair.untouched(stray)).isTrue();
        for (int page = 0; page < PAGES - 1; page++) {
            assertThat(pair.placed(page)).as("page %d", page).isTrue();
        }
        for (int i = 0; i < 100; i++) {
            fixture.pollAll();
        }
        assertThat(pair.initiatorEvents.completed(TOKEN)).isEqualTo(PAGES - 1);
        assertThat(targetEvents.imms).hasSize(PAGES - 1).containsOnly(IMM);
        assertThat(immReports[0]).as("reports of the imms").isLessThan(PAGES - 1);
    }

    /**
     * The target closes its region (or registers the same memory again, under a new key) after the request was
     * posted and before it handled any page. The pages posted after the revocation are refused before posting
     * (FabricShmKeys) and those queued before it are dropped by the target, so the request is reported done only
     * with every page in place (never here, the region closed first), and no page is placed in part.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"closed", "re-keyed"})
    void aPagedWriteIntoARegionClosedAfterItWasPostedIsReportedDoneOnlyWithEveryPageInPlace(final String change) {
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final Pair pair = new Pair(targetEvents);
        final long dstKey = pair.target.register(pair.dst, Device.host());

        pair.writePages(dstKey);
        pair.initiator.poll();
        pair.target.deregister(dstKey);
        if (change.equals("re-keyed")) {
            assertThat(pair.target.register(pair.dst, Device.host())).isNotEqualTo(dstKey);
        }
        pair.settle();

        final int placed = pair.pagesPlaced();
        if (pair.initiatorEvents.completed(TOKEN) == PAGES) {
            assertThat(placed).as("pages placed of a request reported done").isEqualTo(PAGES);
        }
        assertThat(pair.initiatorEvents.failed.values())
                .allSatisfy(e -> assertThat(e).isInstanceOf(RemoteAccessException.class));
        assertThat(targetEvents.imms).hasSize(placed);
        for (int page = 0; page < PAGES; page++) {
            assertThat(pair.placed(page) || pair.untouched(page))
                    .as("page %d is either placed or untouched", page)
                    .isTrue();
        }
    }

    /**
     * The target handles what reached it, then closes its region while the request's last delivery-complete page is
     * still held back at the initiator (shm sends nothing to a peer while a delivery-complete write to it is in
     * flight): that page is refused, so the request must not be reported done; every imm that arrived is a placed
     * page's.
     */
    @Test
    void aPagedWriteIntoARegionClosedWhileItsLastPageIsOnItsWayIsNeverReportedDone() {
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final Pair pair = new Pair(targetEvents);
        final long dstKey = pair.target.register(pair.dst, Device.host());

        pair.writePages(dstKey);
        pair.initiator.poll();
        pair.target.poll();
        pair.target.deregister(dstKey);
        pair.settle();

        final int placed = pair.pagesPlaced();
        assertThat(placed).as("pages placed before the region closed").isLessThan(PAGES);
        assertThat(pair.initiatorEvents.completed(TOKEN))
                .as("pages reported done")
                .isLessThan(PAGES);
        assertThat(targetEvents.imms).hasSize(placed);
        for (int page = 0; page < PAGES; page++) {
            assertThat(pair.placed(page) || pair.untouched(page))
                    .as("page %d is either placed or untouched", page)
                    .isTrue();
        }
    }

    /**
     * One page of the request reaches past the target's region (the target registered one page less than the
     * descriptor would say), posted in the middle of the others: the target refuses it, so the request must not be
     * reported done, whichever page was posted last.
     */
    @ParameterizedTest(name = "stray page posted at {0}")
    @ValueSource(ints = {0, PAGES / 2, PAGES - 1})
    void aPagedWriteWithAPageOutsideTheRegionIsNeverReportedDone(final int position) {
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final Pair pair = new Pair(targetEvents);
        final long dstKey = pair.target.register(pair.dst.asSlice(0, (long) (PAGES - 1) * PAGE), Device.host());
        final int stray = PAGES - 1;

        int next = 0;
        for (int i = 0; i < PAGES; i++) {
            pair.writePage(i == position ? stray : next++, dstKey);
        }
        pair.settle();

        assertThat(pair.initiatorEvents.completed(TOKEN))
                .as("pages reported done")
                .isLessThan(PAGES);
        assertThat(pair.untouched(stray)).isTrue();
    }

    /**
     * Sixteen requests to one peer, the initiator polling after each, so that shm turns posts away while a
     * delivery-complete write is in flight, chains wait part-posted and the chain after them grows meanwhile (over
     * several requests); with the target closing its region after a few passes, or never. A request counts as done
     * once all its pages reported done, and then every one of its pages is in place.
     */
    @ParameterizedTest(name = "region closed after {0} passes (0: never)")
    @ValueSource(ints = {0, 2})
    void requestsWhosePostsTheProviderTurnsAwayCompleteOnlyWithEveryPageInPlace(final int passes) {
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final Pair pair = new Pair(targetEvents);
        final long dstKey = pair.target.register(pair.dst, Device.host());

        for (int request = 0; request < REQUESTS; request++) {
            for (int page = 0; page < PAGES; page++) {
                pair.writePage(request, request * PAGES + page, dstKey);
            }
            pair.initiator.poll();
        }
        if (passes > 0) {
            for (int i = 0; i < passes; i++) {
                pair.initiator.poll();
                pair.target.poll();
            }
            pair.target.deregister(dstKey);
        }
        if (passes == 0) {
            fixture.pollUntil(
                    () -> pair.initiatorEvents.pieces.values().stream().allMatch(pieces -> pieces == PAGES)
                            && pair.initiatorEvents.pieces.size() == REQUESTS);
        } else {
            for (int i = 0; i < SETTLE_POLLS; i++) {
                fixture.pollAll();
            }
        }

        int done = 0;
        for (int request = 0; request < REQUESTS; request++) {
            if (pair.initiatorEvents.completed(request) == PAGES) {
                done++;
                for (int page = request * PAGES; page < (request + 1) * PAGES; page++) {
                    assertThat(pair.placed(page))
                            .as("page %d of request %d, which completed", page, request)
                            .isTrue();
                }
            }
        }
        if (passes == 0) {
            assertThat(done).isEqualTo(REQUESTS);
            assertThat(pair.dst.mismatch(pair.src)).isEqualTo(-1);
        } else {
            assertThat(done).as("requests done before the region closed").isBetween(1, REQUESTS - 1);
            // the pages posted after the key was revoked are refused before posting
            assertThat(pair.initiatorEvents.failed.values())
                    .allSatisfy(e -> assertThat(e).isInstanceOf(RemoteAccessException.class));
        }
        if (passes == 0) {
            assertThat(pair.initiatorEvents.failed).isEmpty();
        }
    }

    @Test
    void cancellingARequestDropsItsHeldPagesUnposted() {
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final Pair pair = new Pair(targetEvents);
        final long dstKey = pair.target.register(pair.dst, Device.host());

        pair.writePages(dstKey);
        assertThat(pair.initiator.outstanding()).isEqualTo(PAGES);
        pair.initiator.cancel(TOKEN);
        assertThat(pair.initiator.outstanding()).isZero();
        for (int i = 0; i < 100; i++) {
            fixture.pollAll();
        }

        assertThat(pair.initiatorEvents.ended()).isZero();
        assertThat(targetEvents.imms).isEmpty();
        assertThat(pair.dst.mismatch(arena.allocate(pair.dst.byteSize()))).isEqualTo(-1);
    }

    @Test
    void aSealedChainPostsTheWritesBoundingItsRangeLastAndTakesNoMoreWrites() {
        final FabricWriteChain chain = new FabricWriteChain();
        assertThat(chain.accepts(1, 2, 3, false)).isTrue();
        final List<long[]> writes = List.of(
                new long[] {4096, 1024}, // slot 100
                new long[] {1024, 1024}, // slot 101: lowest start
                new long[] {1024, 512}, // slot 102: ties the lowest start
                new long[] {8192, 1024}, // slot 103: highest end
                new long[] {8704, 512}); // slot 104: ties the highest end
        for (int i = 0; i < writes.size(); i++) {
            chain.add(100 + i, 1, 2, 3, writes.get(i)[0], writes.get(i)[1], false);
        }
        assertThat(chain.accepts(1, 2, 3, false)).isTrue();
        assertThat(chain.accepts(9, 2, 3, false)).as("another request").isFalse();
        assertThat(chain.accepts(1, 9, 3, false)).as("another peer").isFalse();
        assertThat(chain.accepts(1, 2, 9, false)).as("another key").isFalse();

        chain.seal(false);
        final List<Integer> order = new ArrayList<>();
        final List<Boolean> deliveryComplete = new ArrayList<>();
        for (int i = 0; i < chain.size(); i++) {
            order.add(chain.slot(i));
            deliveryComplete.add(chain.deliveryComplete(i));
        }
        assertThat(order).containsExactly(100, 102, 104, 101, 103);
        assertThat(deliveryComplete).containsExactly(false, false, false, true, true);
        assertThat(chain.accepts(1, 2, 3, false)).as("sealed").isFalse();
        assertThat(chain.next()).isZero();
        chain.advance();
        assertThat(chain.next()).isEqualTo(1);

        chain.clear();
        for (int i = 0; i < writes.size(); i++) {
            chain.add(100 + i, 1, 2, 3, writes.get(i)[0], writes.get(i)[1], false);
        }
        chain.seal(true);
        order.clear();
        deliveryComplete.clear();
        for (int i = 0; i < chain.size(); i++) {
            order.add(chain.slot(i));
            deliveryComplete.add(chain.deliveryComplete(i));
        }
        assertThat(order).as("ranges checked before posting").containsExactly(100, 101, 102, 103, 104);
        assertThat(deliveryComplete).containsExactly(false, false, false, false, true);

        chain.clear();
        assertThat(chain.accepts(9, 9, 9, false)).isTrue();
        chain.add(7, 9, 9, 9, 0, 1, false);
        chain.seal(false);
        assertThat(chain.size()).isEqualTo(1);
        assertThat(chain.deliveryComplete(0)).as("a chain of one").isTrue();

        chain.clear();
        for (int i = 0; i < FabricWriteChain.LIMIT; i++) {
            chain.add(i, 9, 9, 9, i, 1, true);
        }
        assertThat(chain.accepts(9, 9, 9, false))
                .as("full at %d", FabricWriteChain.LIMIT)
                .isFalse();
    }

    /**
     * Spannable writes (injects to a peer that checks every access) of several requests share a chain; a write that is
     * not spannable joins only a chain of its own request alone. Sealed with ranges checked, the order is kept and
     * only the last write is delivery-complete; the chain holds its injected writes' completions as one run per token
     * until its confirmations ended; a withdrawn request's unposted writes leave, but not a delivery-complete write
     * that confirms others, and its runs are forgotten.
     */
    @Test
    void aChainSpansRequestsOnlyWhereEveryWriteIsSpannableAndHoldsTheirCompletionsAsRuns() {
        final FabricWriteChain chain = new FabricWriteChain();
        chain.add(100, 1, 2, 3, 0, 1024, true);
        chain.add(101, 1, 2, 3, 1024, 1024, true);
        assertThat(chain.accepts(4, 2, 3, true))
                .as("another request, spannable")
                .isTrue();
        assertThat(chain.accepts(4, 2, 3, false))
                .as("another request, not spannable")
                .isFalse();
        assertThat(chain.accepts(4, 9, 3, true)).as("another peer").isFalse();
        assertThat(chain.accepts(4, 2, 9, true)).as("another key").isFalse();
        chain.add(102, 4, 2, 3, 2048, 1024, true);
        assertThat(chain.accepts(4, 2, 3, false))
                .as("a large write of the last request, in a chain of several")
                .isFalse();
        chain.add(103, 4, 2, 3, 3072, 1024, true);
        chain.add(104, 5, 2, 3, 4096, 1024, true);

        chain.seal(true);
        final List<Integer> order = new ArrayList<>();
        final List<Long> tokens = new ArrayList<>();
        final List<Boolean> deliveryComplete = new ArrayList<>();
        for (int i = 0; i < chain.size(); i++) {
            order.add(chain.slot(i));
            tokens.add(chain.token(i));
            deliveryComplete.add(chain.deliveryComplete(i));
        }
        assertThat(order).containsExactly(100, 101, 102, 103, 104);
        assertThat(tokens).containsExactly(1L, 1L, 4L, 4L, 5L);
        assertThat(deliveryComplete).containsExactly(false, false, false, false, true);
        assertThat(chain.withdrawable(4, 5))
                .as("its delivery-complete write confirms the others")
                .isFalse();
        assertThat(chain.withdrawable(2, 4)).isTrue();

        for (int i = 0; i < 2; i++) {
            chain.hold(chain.token(i), 1024);
            chain.advance();
        }
        chain.withdraw(4);
        assertThat(chain.size()).isEqualTo(3);
        assertThat(chain.slot(2)).isEqualTo(104);
        assertThat(chain.deliveryComplete(2)).isTrue();
        assertThat(chain.deliveryComplete(1)).as("posted already").isFalse();
        chain.advance();
        chain.handedOver();
        assertThat(chain.runs()).isEqualTo(1);
        assertThat(chain.runToken(0)).isEqualTo(1);
        assertThat(chain.runPieces(0)).isEqualTo(2);
        assertThat(chain.runBytes(0)).isEqualTo(2048);
        assertThat(chain.settled()).as("its confirmation outstanding").isFalse();
        assertThat(chain.confirmationEnded(null)).as("the last confirmation").isTrue();
        assertThat(chain.confirmationFailure()).isNull();
        assertThat(chain.settled()).isTrue();

        chain.clear();
        chain.add(200, 7, 2, 3, 0, 8192, false);
        assertThat(chain.accepts(7, 2, 3, true)).as("the same request").isTrue();
        assertThat(chain.accepts(8, 2, 3, true))
                .as("another request behind a large write")
                .isFalse();
        chain.add(201, 7, 2, 3, 8192, 1024, true);
        chain.seal(false);
        chain.hold(7, 8192);
        chain.dropRuns(7);
        assertThat(chain.runs()).isZero();
        final TransferEngineException refused = new TransferEngineException("refused");
        assertThat(chain.confirmationEnded(refused)).as("one of two").isFalse();
        assertThat(chain.confirmationEnded(null)).isTrue();
        assertThat(chain.confirmationFailure()).isSameAs(refused);
    }
}
