package dev.transferengine.bench;

import dev.transferengine.IdleStrategyKind;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

/** The bench's own waiting loops idle the way the engine's workers were told to with {@code --idle}. */
final class IdleStrategies {

    private IdleStrategies() {}

    static IdleStrategy of(final IdleStrategyKind kind) {
        return switch (kind) {
            case SPIN -> new BusySpinIdleStrategy();
            case YIELD -> new YieldingIdleStrategy();
            // short parks: the bench waits on completions that take microseconds
            case BACKOFF -> new BackoffIdleStrategy(100, 10, 1_000, 50_000);
        };
    }
}
