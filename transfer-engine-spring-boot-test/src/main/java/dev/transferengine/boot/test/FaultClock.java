package dev.transferengine.boot.test;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The clock both loopback engines read their deadlines from under fault injection: it moves only when
 * {@link TransferEngineFaults} moves it, so nothing times out because the machine is slow, and a test makes a timeout
 * happen when it wants one.
 */
final class FaultClock implements LongSupplier {

    private final AtomicLong nanos = new AtomicLong();

    @Override
    public long getAsLong() {
        return nanos.get();
    }

    void advance(final long byNanos) {
        nanos.addAndGet(byNanos);
    }
}
