package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * shm write chains that span requests (see {@link FabricDomain}, "Write chains (shm)"): the 1 KiB pages of several
 * requests to one peer and key go as injects behind one delivery-complete write, and every request's pages are
 * reported only once that write completed, or failed with what failed it. A request here is what the engine makes of a
 * paged write on one NIC: one {@link FabricDomain#write} per page, all with the request's token.
 */
class FabricSpanningChainTest {

    private static final int PAGE = 1024;
    private static final int PAGES = 16;
    private static final int REQUESTS = 8;
    /** Requests the buffers have room for. */
    private static final int ROOM = 20;
    /** The token of the write that maps the peer before a test's requests. */
    private static final long FIRST = 1000;

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        fixture.close();
        arena.close();
    }

    /** Records what the initiator reports, in order: a chain's held runs, each write's own completion, failures. */
    private static final class OrderListener extends RecordingDomainListener {
        final List<String> events = new ArrayList<>();
        final Map<Long, Integer> done = new HashMap<>();
        final Map<Long, Integer> failedPieces = new HashMap<>();
        final List<TransferEngineException> failures = new ArrayList<>();

        @Override
        public void onComplete(final long token, final long bytes, final int pieces) {
            events.add("held " + token + " x" + pieces);
            done.merge(token, pieces, Integer::sum);
        }

        @Override
        public void onComplete(final long token, final long bytes) {
            events.add("own " + token);
            done.merge(token, 1, Integer::sum);
        }

        @Override
        public void onFailed(final long token, final TransferEngineException error, final int pieces) {
            events.add("failed " + token + " x" + pieces);
            failedPieces.merge(token, pieces, Integer::sum);
            failures.add(error);
        }

        @Override
        public void onFailed(final long token, final TransferEngineException error) {
            onFailed(token, error, 1);
        }

        int done(final long token) {
            return done.getOrDefault(token, 0);
        }

        int ended(final int requests) {
            int ended = 0;
            for (long token = 0; token < requests; token++) {
                if (done(token) + failedPieces.getOrDefault(token, 0) == PAGES) {
                    ended++;
                }
            }
            return ended;
        }
    }

    /** An initiator and a target NIC on shm, the target's region {@code regionPages} pages long, the peer mapped. */
    private final class Pair {
        final OrderListener events = new OrderListener();
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final FabricDomain initiator;
        final FabricDomain target;
        final long peer;
        final MemorySegment src = arena.allocate((long) ROOM * PAGES * PAGE, 4096);
        final MemorySegment dst = arena.allocate((long) ROOM * PAGES * PAGE, 4096);
        final long srcKey;
        final long dstKey;

        Pair(final int regionPages) {
            FabricFixture.assumeAvailable("shm");
            initiator = (FabricDomain) fixture.open(FabricFixture.config("shm", 1, Map.of()), 0, events);
            target = (FabricDomain) fixture.open(FabricFixture.config("shm", 1, Map.of()), 0, targetEvents);
            peer = initiator.resolve(target.address());
            for (long i = 0; i < src.byteSize(); i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
            }
            srcKey = initiator.register(src, Device.host());
            dstKey = target.register(dst.asSlice(0, (long) regionPages * PAGE), Device.host());
            // shm turns posts away until it mapped the peer's region: one write first, done before the requests
            writePage(FIRST, 0); // request 0 writes the page again
            fixture.pollUntil(() -> events.done(FIRST) == 1 && initiator.outstanding() == 0);
            events.events.clear();
        }

        void writePage(final long token, final int page) {
            initiator.write(new WriteDescriptor()
                    .token(token)
                    .source(src, (long) page * PAGE, srcKey, PAGE)
                    .target(peer, dst.address(), (long) page * PAGE, dstKey)
                    .imm(true, 5));
        }

        /** Request {@code request}: its {@link #PAGES} pages to its own pages of the target. */
        void writeRequest(final int request) {
            for (int page = 0; page < PAGES; page++) {
                writePage(request, request * PAGES + page);
            }
        }

        boolean landed(final int request) {
            final long offset = (long) request * PAGES * PAGE;
            return dst.asSlice(offset, PAGES * PAGE).mismatch(src.asSlice(offset, PAGES * PAGE)) == -1;
        }

        boolean untouched(final int request) {
            return dst.asSlice((long) request * PAGES * PAGE, PAGES * PAGE).mismatch(arena.allocate(PAGES * PAGE))
                    == -1;
        }
    }

    /**
     * Eight requests of sixteen 1 KiB pages posted in one pass go as one chain: 127 injects and one delivery-complete
     * write, the only operation left outstanding. Nothing is reported before the target handled it (the target has not
     * polled yet); then each request's held pages in one report, in posting order, and last that write's own
     * completion. Every page landed.
     */
    @Test
    void requestsPostedInOnePassCompleteOnlyWithTheirChainsDeliveryCompleteWrite() {
        final Pair pair = new Pair(ROOM * PAGES);
        for (int request = 0; request < REQUESTS; request++) {
            pair.writeRequest(request);
        }
        pair.initiator.poll();
        pair.initiator.poll();

        assertThat(pair.events.events).as("reported before the target polled").isEmpty();
        assertThat(pair.initiator.outstanding()).as("operations outstanding").isEqualTo(1);

        fixture.pollUntil(() -> pair.events.ended(REQUESTS) == REQUESTS && pair.initiator.outstanding() == 0);

        final List<String> expected = new ArrayList<>();
        for (int request = 0; request < REQUESTS - 1; request++) {
            expected.add("held " + request + " x" + PAGES);
        }
        expected.add("held " + (REQUESTS - 1) + " x" + (PAGES - 1));
        expected.add("own " + (REQUESTS - 1));
        assertThat(pair.events.events).containsExactlyElementsOf(expected);
        for (int request = 0; request < REQUESTS; request++) {
            assertThat(pair.events.done(request))
                    .as("pages of request %d done", request)
                    .isEqualTo(PAGES);
            assertThat(pair.landed(request)).as("request %d landed", request).isTrue();
        }
        assertThat(pair.events.failures).isEmpty();
        fixture.pollUntil(() -> pair.targetEvents.imms.size() == REQUESTS * PAGES + 1);
    }

    /**
     * A second chain of eight requests waits while the first one's delivery-complete write is in flight; its last page
     * (the one to confirm it) reaches past the target's region, so it is refused before posting. The first eight
     * requests complete; every request of the second fails every page exactly once, with the refusal named, and none
     * of them is reported done.
     */
    @Test
    void aRefusedDeliveryCompleteWriteFailsEveryRequestItConfirms() {
        final Pair pair = new Pair(2 * REQUESTS * PAGES - 1);
        for (int request = 0; request < REQUESTS; request++) {
            pair.writeRequest(request);
        }
        pair.initiator.poll();
        for (int request = REQUESTS; request < 2 * REQUESTS; request++) {
            pair.writeRequest(request);
        }
        fixture.pollUntil(() -> pair.events.ended(2 * REQUESTS) == 2 * REQUESTS && pair.initiator.outstanding() == 0);

        for (int request = 0; request < REQUESTS; request++) {
            assertThat(pair.events.done(request))
                    .as("pages of request %d done", request)
                    .isEqualTo(PAGES);
            assertThat(pair.landed(request)).isTrue();
        }
        for (long request = REQUESTS; request < 2 * REQUESTS; request++) {
            assertThat(pair.events.done(request))
                    .as("pages of request %d done", request)
                    .isZero();
            assertThat(pair.events.failedPieces.get(request))
                    .as("pages of request %d failed", request)
                    .isEqualTo(PAGES);
        }
        assertThat(pair.events.failures).allSatisfy(e -> assertThat(e)
                .isInstanceOfSatisfying(RemoteAccessException.class, refused -> assertThat(refused.reason())
                        .isEqualTo(RemoteAccessException.Reason.OUT_OF_BOUNDS)));
        assertThat(pair.events.failures)
                .filteredOn(e -> String.valueOf(e.getMessage()).contains("the delivery-complete write that confirms"))
                .as("held runs failed with the refusal named")
                .hasSize(REQUESTS);
    }

    /**
     * The initiator closes while its chain's delivery-complete write is outstanding (the target has not polled):
     * every request still ends with all its pages accounted for once, done (the close read the write's completion
     * while waiting for the target of this process to read its posts) or failed as closed, never dropped.
     */
    @Test
    void closingWithAChainsDeliveryCompleteWriteOutstandingEndsEveryHeldRequestOnce() {
        final Pair pair = new Pair(ROOM * PAGES);
        for (int request = 0; request < REQUESTS; request++) {
            pair.writeRequest(request);
        }
        pair.initiator.poll();
        assertThat(pair.initiator.outstanding()).isEqualTo(1);

        pair.initiator.close();

        for (long request = 0; request < REQUESTS; request++) {
            assertThat(pair.events.done(request) + pair.events.failedPieces.getOrDefault(request, 0))
                    .as("pages of request %d accounted for", request)
                    .isEqualTo(PAGES);
        }
        assertThat(pair.events.failures).allSatisfy(e -> assertThat(e).isInstanceOf(EngineClosedException.class));
    }

    /**
     * Requests 0-7 go out as one chain whose delivery-complete write is in flight; 8-15 make the next chain, which the
     * provider turns away meanwhile; 16-19 arrive then and grow the chain after it instead of being posted. Cancelled
     * then: request 3 (posted, its pages held), 10 (sealed, not posted: withdrawn), 15 (its last page confirms the
     * second chain: that one is posted anyway, the rest withdrawn; what is reported of it is the engine's to ignore)
     * and 17 (in the chain being built: withdrawn). Every other request completes exactly once with its pages in
     * place, 10's and 17's pages never land, 3 and 17 are never reported, and three delivery-complete writes confirm
     * it all.
     */
    @Test
    void aCancelledRequestInAChainOfSeveralLeavesTheOthersToComplete() {
        final Pair pair = new Pair(ROOM * PAGES);
        for (int request = 0; request < REQUESTS; request++) {
            pair.writeRequest(request);
        }
        pair.initiator.poll();
        for (int request = REQUESTS; request < 2 * REQUESTS; request++) {
            pair.writeRequest(request);
        }
        pair.initiator.poll();
        assertThat(pair.initiator.outstanding())
                .as("the first chain's delivery-complete write and the second chain, turned away whole")
                .isEqualTo(1 + REQUESTS * PAGES);
        for (int request = 2 * REQUESTS; request < ROOM; request++) {
            pair.writeRequest(request);
        }
        pair.initiator.poll();
        assertThat(pair.events.events).isEmpty();
        for (final long cancelled : new long[] {3, 10, 15, 17}) {
            pair.initiator.cancel(cancelled);
        }
        final List<Integer> completing = List.of(0, 1, 2, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 16, 18, 19);
        fixture.pollUntil(() ->
                completing.stream().allMatch(r -> pair.events.done(r) == PAGES) && pair.initiator.outstanding() == 0);

        assertThat(pair.events.failures).isEmpty();
        for (final int request : completing) {
            assertThat(pair.landed(request)).as("request %d landed", request).isTrue();
        }
        assertThat(pair.untouched(10)).as("request 10 untouched").isTrue();
        assertThat(pair.untouched(17)).as("request 17 untouched").isTrue();
        final List<String> expected = new ArrayList<>();
        for (final int request : List.of(0, 1, 2, 4, 5, 6)) {
            expected.add("held " + request + " x" + PAGES);
        }
        expected.addAll(List.of("held 7 x" + (PAGES - 1), "own 7"));
        for (final int request : List.of(8, 9, 11, 12, 13, 14)) {
            expected.add("held " + request + " x" + PAGES);
        }
        expected.addAll(
                List.of("own 15", "held 16 x" + PAGES, "held 18 x" + PAGES, "held 19 x" + (PAGES - 1), "own 19"));
        assertThat(pair.events.events).containsExactlyElementsOf(expected);
    }
}
