package dev.transferengine.core;

import dev.transferengine.TransferCounters;

/**
 * How a worker bumps a user's {@link TransferCounters}, whose mutators are not public so that no user can forge a
 * completion. The API package hands the one implementation to {@link Engines#open}.
 */
public interface TransferCountersUpdater {

    /** One request completed. */
    void markDone(TransferCounters counters);

    /** One request failed. */
    void markFailed(TransferCounters counters);
}
