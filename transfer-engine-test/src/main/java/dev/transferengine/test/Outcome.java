package dev.transferengine.test;

import dev.transferengine.TransferListener;
import dev.transferengine.exceptions.TransferEngineException;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * How one operation ended: how many times its listener was called, and the error if it failed. Fault cases submit
 * with it and then check the contract's terminal state: ended exactly once, done or failed with a typed error, by
 * the deadline plus {@link #PAST_DEADLINE} on a manual clock.
 */
final class Outcome implements TransferListener {

    /** How long past its deadline an operation may still end (issue 21: every operation ends by deadline + 100 ms). */
    static final Duration PAST_DEADLINE = Duration.ofMillis(100);

    final AtomicInteger ends = new AtomicInteger();
    final AtomicReference<@Nullable TransferEngineException> error = new AtomicReference<>();

    @Override
    public void onDone() {
        ends.incrementAndGet();
    }

    @Override
    public void onError(final TransferEngineException failure) {
        error.set(failure);
        ends.incrementAndGet();
    }

    boolean ended() {
        return ends.get() > 0;
    }

    /**
     * Moves the manual {@code clock} to the latest time the contract lets {@code outcomes} end, their deadline (they
     * were submitted at {@code submittedAt} with the operation timeout {@code timeout}) plus {@link #PAST_DEADLINE},
     * and no further; then waits until each ended (at most {@code wait} of real time, however slow the machine: an
     * operation still open then broke its bound) and checks that each ended exactly once, done or with a typed error.
     * Test thread; blocks.
     */
    static void endByTheBound(
            final AtomicLong clock,
            final long submittedAt,
            final Duration timeout,
            final List<Outcome> outcomes,
            final Duration wait) {
        final long bound = submittedAt + timeout.plus(PAST_DEADLINE).toNanos();
        clock.accumulateAndGet(bound, Math::max);
        await().atMost(wait).until(() -> outcomes.stream().allMatch(Outcome::ended));
        assertEachEndedOnce(outcomes);
    }

    /** Checks that each of {@code outcomes} ended exactly once, done or failed with a typed error. */
    static void assertEachEndedOnce(final List<Outcome> outcomes) {
        assertThat(outcomes).allSatisfy(o -> assertThat(o.ends).as("ends").hasValue(1));
        assertThat(outcomes).allSatisfy(o -> assertThat(o.error)
                .satisfiesAnyOf(e -> assertThat(e).hasValue(null), e -> assertThat(e.get())
                        .isInstanceOf(TransferEngineException.class)));
    }
}
