package dev.transferengine.core;

import dev.transferengine.IdleStrategyKind;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class WakeableIdleTest {

    /** Idles (no work) until the yield phase has passed; returns how often the idle looked before parking. */
    private static int parkAttemptsWhileIdling(final boolean busy) {
        final AtomicInteger lookedBeforeParking = new AtomicInteger();
        final WakeableIdle idle = new WakeableIdle(
                IdleStrategyKind.BACKOFF,
                () -> {
                    lookedBeforeParking.incrementAndGet();
                    return false;
                },
                () -> busy);
        idle.idle(0); // the idling starts here
        final long until = System.nanoTime() + WakeableIdle.YIELD_UNTIL_NANOS;
        long calledAt;
        do { // the last call starts after the yield phase has ended, however the thread was scheduled
            calledAt = System.nanoTime();
            idle.idle(0);
        } while (calledAt - until < 0);
        return lookedBeforeParking.get();
    }

    @Test
    void anIdleThreadWithNothingInFlightParks() {
        assertThat(parkAttemptsWhileIdling(false)).isPositive();
    }

    @Test
    void aThreadWaitingForWorkInFlightNeverParks() {
        assertThat(parkAttemptsWhileIdling(true)).isZero();
    }
}
