package dev.transferengine.core;

import dev.transferengine.ApiTestAccess;
import dev.transferengine.EngineCounter;
import dev.transferengine.ImmCountListener;
import dev.transferengine.ImmCountState;
import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.ImmAbandonedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransferTimeoutException;
import dev.transferengine.spi.DomainListener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Drives the table and its callback queue by hand: no threads, so every interleaving here is deterministic. */
class ImmCountTableTest {

    private final Counters counters = new Counters(List.of(1), ApiTestAccess.transferCountersUpdater());
    private final CallbackDispatcher callbacks = new CallbackDispatcher(counters);
    private static final NetworkAddress PEER = NetworkAddress.of("tcp", new byte[] {1});
    private static final long TTL = 800;

    /** A bound of 6, so that the one peer of most tests holds at most 3 places: half, the rest kept for another. */
    private final ImmCountTable table = new ImmCountTable(callbacks, counters, 6, TTL, 0);

    private void runCallbacks() {
        while (callbacks.doWork() > 0) {
            // drain
        }
    }

    /** {@code count} imms arrive as a NIC reports them: reserved, then consumed; refused ones are dropped. */
    private void imms(final int imm, final int count) {
        imms(PEER, imm, count);
    }

    private void imms(final @Nullable NetworkAddress peer, final int imm, final int count) {
        for (int i = 0; i < count; i++) {
            final long reservation = table.reserve(peer, imm);
            if (reservation != DomainListener.IMM_REFUSED) {
                table.consume(reservation, 1);
            }
        }
    }

    @Test
    void firesAtExactlyTheExpectedCountAndSubtractsIt() {
        final AtomicInteger fired = new AtomicInteger();
        table.expect(7, 3, imm -> fired.incrementAndGet() < 0);
        imms(7, 2);
        runCallbacks();
        assertThat(fired).hasValue(0);
        imms(7, 1);
        runCallbacks();
        assertThat(fired).hasValue(1);
        assertThat(table.remove(7)).isNull(); // one-shot: removed itself
    }

    @Test
    void reArmsWhileTheListenerAsksAndReplaysTheSurplusWhenItStops() {
        final List<Integer> plain = new ArrayList<>();
        table.immListener(plain::add);
        final AtomicInteger fired = new AtomicInteger();
        table.expect(5, 2, imm -> fired.incrementAndGet() < 2);
        imms(5, 5); // fires at 2; 3 more arrive while the listener is pending
        runCallbacks();
        assertThat(fired).hasValue(2); // re-armed once, then stopped
        assertThat(plain).containsExactly(5); // 5 - 2 - 2 = 1 surplus replayed
    }

    @Test
    void immsThatArriveBeforeAnyoneExpectsThemAreCredited() {
        imms(9, 4);
        final AtomicInteger fired = new AtomicInteger();
        final ImmCountState replaced = table.expect(9, 3, imm -> fired.incrementAndGet() < 0);
        assertThat(replaced).isEqualTo(new ImmCountState(4, 0));
        runCallbacks();
        assertThat(fired).hasValue(1);
        // the one surplus credit stays for the next claimant
        assertThat(table.counter(9).balance()).isEqualTo(1);
    }

    @Test
    void unexpectedImmsGoToTheImmListenerWhenOneIsSet() {
        final List<Integer> plain = new ArrayList<>();
        table.immListener(plain::add);
        imms(3, 2);
        runCallbacks();
        assertThat(plain).containsExactly(3, 3);
        assertThat(table.remove(3)).isNull();
    }

    @Test
    void polledCounterTakesCreditsAndWaitsForThem() {
        final PolledImmCounter counter = table.counter(11);
        imms(11, 2);
        counter.await(2);
        assertThat(counter.balance()).isZero();
        assertThatThrownBy(() -> counter.await(1, Duration.ofMillis(20)))
                .isInstanceOf(TransferTimeoutException.class)
                .hasMessageContaining("imm 11");
        assertThat(counter.balance()).as("credits given back on timeout").isZero();
        imms(11, 1);
        counter.await(1, Duration.ofSeconds(5));
    }

    @Test
    void replacingACounterReleasesItsWaiters() {
        final PolledImmCounter counter = table.counter(12);
        table.expect(12, 1, imm -> false);
        assertThatThrownBy(() -> counter.await(1))
                .isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("replaced or removed");
    }

    @Test
    void removeReturnsCountAndExpected() {
        table.expect(4, 10, imm -> false);
        imms(4, 3);
        assertThat(table.remove(4)).isEqualTo(new ImmCountState(3, 10));
    }

    @Test
    void expectedCountMustBePositive() {
        assertThatThrownBy(() -> table.expect(1, 0, imm -> false)).isInstanceOf(InvalidRequestException.class);
    }

    @Test
    void aThrowingListenerIsCountedAndRemovesTheExpectation() {
        final List<Integer> plain = new ArrayList<>();
        table.immListener(plain::add);
        table.expect(8, 1, imm -> {
            throw new IllegalStateException("user bug");
        });
        imms(8, 2);
        runCallbacks();
        assertThat(counters.counter(dev.transferengine.EngineCounter.CALLBACK_ERRORS))
                .isEqualTo(1);
        assertThat(plain).containsExactly(8);
    }

    @Test
    void creditsAtMostTheBoundOfDistinctUnexpectedValuesAndCountsTheRest() {
        imms(1, 2);
        imms(2, 1);
        imms(3, 1);
        final long credited = table.reserve(PEER, 3);
        assertThat(credited).as("a value credited already").isNotEqualTo(DomainListener.IMM_REFUSED);
        table.release(credited);
        assertThat(table.reserve(PEER, 4)).isEqualTo(DomainListener.IMM_REFUSED);
        imms(4, 1); // refused again, so dropped

        assertThat(counters.counter(dev.transferengine.EngineCounter.IMMS_REFUSED))
                .isEqualTo(2);
        assertThat(table.remove(4)).isNull();
        assertThat(table.remove(1)).isEqualTo(new ImmCountState(2, 0));
        assertThat(table.reserve(PEER, 4))
                .as("claiming a value frees its place")
                .isNotEqualTo(DomainListener.IMM_REFUSED);
    }

    @Test
    void aReservationHoldsItsPlaceSoItIsCreditedEvenIfOtherNicsFillTheTableMeanwhile() {
        final long reservation = table.reserve(PEER, 9);
        imms(1, 1);
        imms(2, 1);
        assertThat(table.reserve(PEER, 3)).as("two credited and one reserved").isEqualTo(DomainListener.IMM_REFUSED);
        table.consume(reservation, 1);
        assertThat(table.remove(9)).isEqualTo(new ImmCountState(1, 0));
    }

    @Test
    void reservationsConsumedTogetherCreditEachImmAndKeepOnePlaceForTheirValue() {
        // a WRITEV frame's pages are all admitted before the run is reported: each reservation takes a place
        final long first = table.reserve(PEER, 9);
        final long second = table.reserve(PEER, 9);
        final long third = table.reserve(PEER, 9);
        assertThat(second).isEqualTo(first);
        assertThat(third).isEqualTo(first);
        assertThat(table.reserve(PEER, 9)).as("the peer holds its share").isEqualTo(DomainListener.IMM_REFUSED);

        table.consume(first, 3);

        assertThat(counters.counter(dev.transferengine.EngineCounter.IMM_EVENTS))
                .isEqualTo(3);
        assertThat(table.reserve(PEER, 3)).as("two places given back").isNotEqualTo(DomainListener.IMM_REFUSED);
        assertThat(table.reserve(PEER, 4)).isNotEqualTo(DomainListener.IMM_REFUSED);
        assertThat(table.reserve(PEER, 5)).as("9's entry keeps one").isEqualTo(DomainListener.IMM_REFUSED);
        assertThat(table.remove(9)).isEqualTo(new ImmCountState(3, 0));
    }

    @Test
    void oneReservationForTheImmsOfAFrameHoldsOnePlaceConsumedOrReleasedWhole() {
        // a PAGES_IMM frame of 256 pages: one lock, one place, 256 imm events
        final long batch = table.reserve(PEER, 9, 256);
        assertThat(batch).isNotEqualTo(DomainListener.IMM_REFUSED);
        assertThat(table.placesHeld()).isEqualTo(1);

        table.consume(batch, 256);

        assertThat(counters.counter(dev.transferengine.EngineCounter.IMM_EVENTS))
                .isEqualTo(256);
        assertThat(table.placesHeld()).as("9's credits keep the one place").isEqualTo(1);
        assertThat(table.remove(9)).isEqualTo(new ImmCountState(256, 0));
        assertThat(table.placesHeld()).isZero();

        table.release(table.reserve(PEER, 10, 64), 64);
        assertThat(table.placesHeld())
                .as("a refused frame's reservation gives its one place back")
                .isZero();
        assertThat(counters.counter(dev.transferengine.EngineCounter.IMM_EVENTS))
                .isEqualTo(256);
    }

    @Test
    void aReleasedReservationFreesItsPlaceAndCreditsNothing() {
        imms(1, 1);
        imms(2, 1);
        final long reservation = table.reserve(PEER, 9);
        assertThat(table.reserve(PEER, 3)).isEqualTo(DomainListener.IMM_REFUSED);
        table.release(reservation);
        assertThat(table.remove(9)).isNull();
        assertThat(table.reserve(PEER, 3)).isNotEqualTo(DomainListener.IMM_REFUSED);
    }

    @Test
    void expectedValuesAndTheImmListenerAreNotBounded() {
        imms(1, 1);
        imms(2, 1);
        imms(3, 1);
        table.expect(7, 5, imm -> false);
        assertThat(table.reserve(PEER, 7)).isNotEqualTo(DomainListener.IMM_REFUSED);
        table.immListener(imm -> {});
        assertThat(table.reserve(PEER, 8)).isNotEqualTo(DomainListener.IMM_REFUSED);
        assertThat(counters.counter(dev.transferengine.EngineCounter.IMMS_REFUSED))
                .isZero();
    }

    private static ImmAbandonedException abandonment(final int imm, final int missing) {
        return new ImmAbandonedException(NetworkAddress.of("tcp", new byte[] {1, 2, 3}), imm, missing, "timed out");
    }

    /** An expectation listener that records how it ended. */
    private static final class Ending implements ImmCountListener {
        final List<ImmAbandonedException> abandoned = new ArrayList<>();
        int reached;

        @Override
        public boolean onReached(final int imm) {
            reached++;
            return false;
        }

        @Override
        public void onAbandoned(final ImmAbandonedException abandonment) {
            abandoned.add(abandonment);
        }
    }

    @Test
    void anAbandonmentEndsTheExpectationAndKeepsItsCredits() {
        final Ending ending = new Ending();
        table.expect(11, 4, ending);
        imms(11, 1);
        final ImmAbandonedException nack = abandonment(11, 3);

        table.onAbandoned(nack);
        runCallbacks();

        assertThat(ending.abandoned).containsExactly(nack);
        assertThat(ending.reached).isZero();
        assertThat(table.remove(11))
                .as("the expectation is gone, its credit kept")
                .isEqualTo(new ImmCountState(1, 0));
        assertThat(counters.counter(EngineCounter.IMMS_ABANDONED)).isEqualTo(1);
    }

    @Test
    void anAbandonmentThatComesFirstEndsTheNextExpectationOnce() {
        final ImmAbandonedException nack = abandonment(12, 2);
        table.onAbandoned(nack);
        final Ending first = new Ending();
        final Ending second = new Ending();

        table.expect(12, 2, first);
        runCallbacks();
        table.expect(12, 1, second);
        imms(12, 1);
        runCallbacks();

        assertThat(first.abandoned).containsExactly(nack);
        assertThat(second.abandoned).isEmpty();
        assertThat(second.reached).isEqualTo(1);
    }

    @Test
    void anAbandonmentEndsTheCountersShortWaiterAndGivesItsCreditsBack() {
        final PolledImmCounter counter = table.counter(13);
        imms(13, 1);
        final ImmAbandonedException nack = abandonment(13, 1);

        table.onAbandoned(nack);

        assertThatThrownBy(() -> counter.await(2, Duration.ofDays(1))).isSameAs(nack);
        assertThat(counter.balance()).isEqualTo(1);
        counter.await(1); // covered: no abandonment left to end it
        assertThat(counter.balance()).isZero();
    }

    /** Distinct values from {@code peer}, one imm each, starting at {@code first}; how many were credited. */
    private int distinct(final @Nullable NetworkAddress peer, final int first, final int count) {
        final long refused = counters.counter(EngineCounter.IMMS_REFUSED);
        for (int imm = first; imm < first + count; imm++) {
            imms(peer, imm, 1);
        }
        return count - (int) (counters.counter(EngineCounter.IMMS_REFUSED) - refused);
    }

    @Test
    void eachPeerHoldsAFairShareOfTheBoundSoOneCannotStarveTheOthers() {
        final ImmCountTable fair = new ImmCountTable(callbacks, counters, 12, TTL, 0);
        final NetworkAddress second = NetworkAddress.of("tcp", new byte[] {2});
        final NetworkAddress third = NetworkAddress.of("tcp", new byte[] {3});
        final List<NetworkAddress> peers = List.of(PEER, second, third);
        final int[] credited = new int[peers.size()];
        int imm = 0;
        for (int p = 0; p < peers.size(); p++) {
            for (int i = 0; i < 12; i++, imm++) {
                final long reservation = fair.reserve(peers.get(p), imm);
                if (reservation != DomainListener.IMM_REFUSED) {
                    fair.consume(reservation, 1);
                    credited[p]++;
                }
            }
        }
        // 12 / 2 alone, 12 / 3 beside one, and what is left of 12 / 4 beside two
        assertThat(credited).containsExactly(6, 4, 2);
        assertThat(fair.remove(0)).isEqualTo(new ImmCountState(1, 0));
        assertThat(fair.reserve(PEER, 1000))
                .as("the first peer is over its share of 12 / 4 now")
                .isEqualTo(DomainListener.IMM_REFUSED);
        assertThat(fair.reserve(third, 1000)).isNotEqualTo(DomainListener.IMM_REFUSED);
    }

    @Test
    void immsFromAnUnknownPeerShareOneQuotaAsLargeAsTheBound() {
        assertThat(distinct(null, 0, 10)).isEqualTo(6);
        assertThat(table.placesHeld()).isEqualTo(6);
    }

    @Test
    void creditsNobodyClaimsExpireAfterTheTimeToLiveAndAreCounted() {
        assertThat(table.tick(0)).isZero(); // the first sweep, at the start
        imms(1, 2);
        imms(2, 1);
        final PolledImmCounter claimed = table.counter(2);
        table.expect(3, 5, imm -> false);
        imms(3, 1);
        assertThat(table.tick(TTL / 8 - 1)).as("no sweep due yet").isZero();
        assertThat(table.tick(TTL - 1)).as("not expired yet").isZero();
        assertThat(distinct(PEER, 10, 3)).as("1 held, so 2 of 3 fit").isEqualTo(2);

        assertThat(table.tick(TTL + TTL / 8))
                .as("imm 1 expired; the next sweep came an eighth later")
                .isEqualTo(1);
        assertThat(counters.counter(EngineCounter.IMMS_EXPIRED)).isEqualTo(2);
        assertThat(table.remove(1)).isNull();
        assertThat(claimed.balance()).isEqualTo(1);
        assertThat(table.remove(3)).isEqualTo(new ImmCountState(1, 5));
        assertThat(table.placesHeld()).as("the two credited at TTL - 1").isEqualTo(2);

        assertThat(table.tick(2 * TTL)).isEqualTo(2);
        assertThat(counters.counter(EngineCounter.IMMS_EXPIRED)).isEqualTo(4);
        assertThat(table.placesHeld()).isZero();
    }
}
