package dev.transferengine;

import dev.transferengine.core.TransferCountersUpdater;

/** What the stress tests need of the API package's internals; lives in that package, so it reaches them. */
public final class JcstressAccess {

    private JcstressAccess() {}

    /**
     * The engine's updater of per-request counters, which the core's {@code Counters} need.
     *
     * @return the updater
     */
    public static TransferCountersUpdater transferCountersUpdater() {
        return TransferCounters.UPDATER;
    }
}
