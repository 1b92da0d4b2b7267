package dev.transferengine.core;

import dev.transferengine.EngineConfig;
import dev.transferengine.EngineCounter;
import dev.transferengine.exceptions.WorkerFailedException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;

import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * The NICs of one group and their life: opened at start, closed at the end, and, after the worker hit an
 * {@link Error}, closed, marked down and reopened with back-off, unless the {@link WorkerErrorPolicy} says the JVM is
 * broken: the group then stays down for good. What the new NICs must hold again (regions, peers, receive buffers)
 * is {@link GroupResources}' job. Worker thread only, except {@link #failure()}.
 */
final class GroupNics {

    private static final long REOPEN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final int group;
    private final EngineConfig config;
    private final WorkerServices services;
    /** Shared with {@link GroupResources} and the group, which see the current NICs after a reopen. */
    private final Domain[] domains;

    private final CompletionQueue completions;
    private final ThrottledLog errors;

    private boolean open;
    /** Down for good: the {@link WorkerErrorPolicy} forbade reopening the NICs. */
    private boolean downForGood;

    private long nextReopen;
    private @Nullable WorkerFailedException downError;
    private volatile @Nullable String failure;

    GroupNics(
            final int group,
            final EngineConfig config,
            final WorkerServices services,
            final Domain[] domains,
            final CompletionQueue completions,
            final ThrottledLog errors) {
        this.group = group;
        this.config = config;
        this.services = services;
        this.domains = domains;
        this.completions = completions;
        this.errors = errors;
    }

    /** Whether the NICs are open and serve. */
    boolean isOpen() {
        return open;
    }

    /** Any thread: why the group is down (its worker failed and its NICs are being reopened), or null while it serves. */
    @Nullable String failure() {
        return failure;
    }

    /** While down: the error every request fails with; null while the NICs serve. */
    @Nullable WorkerFailedException downError() {
        return downError;
    }

    /** Opens every NIC of the group, each reporting to the group's completion queue. */
    void open() {
        for (int nic = 0; nic < domains.length; nic++) {
            domains[nic] = services.transport()
                    .openDomain(new DomainContext(
                            config,
                            group,
                            nic,
                            new NicEvents(group, nic, completions, services.imms(), services.counters())));
        }
        open = true;
    }

    /** Closes every NIC opened so far; a failure to close one is logged and the others still close. */
    void close() {
        open = false;
        for (final Domain domain : domains) {
            if (domain != null) {
                try {
                    domain.close();
                } catch (final RuntimeException | Error e) { // closing the others matters more
                    errors.warn("closing " + domain.description() + " failed", e);
                }
            }
        }
    }

    /**
     * The worker hit an {@link Error}: the NICs' state cannot be trusted any more. Marks the group down, counts and
     * logs it; the caller fails what is in flight with the returned error and closes the NICs.
     *
     * @return the error the operations in flight, and every request while down, fail with
     */
    WorkerFailedException fallDown(final Error cause, final long now) {
        open = false;
        downForGood = !WorkerErrorPolicy.mayReopen(cause);
        failure = downForGood
                ? "worker failed for good, its NICs stay closed: " + cause
                : "worker failed, reopening its NICs: " + cause;
        services.counters().increment(EngineCounter.WORKER_RESTARTS);
        errors.error("group " + group + ": worker failed; its in-flight operations fail and its NICs reopen", cause);
        final WorkerFailedException error = new WorkerFailedException(
                "the worker of group " + group + " failed (" + cause + ") while the operation was in flight; "
                        + (downForGood ? "the group stays down until the engine is closed" : "its NICs were reopened"),
                cause);
        downError = error;
        nextReopen = now;
        return error;
    }

    /** While down: whether a reopen is due now; if so, the next one (should this fail) waits for the back-off. */
    boolean reopenDue(final long now) {
        if (downForGood || now - nextReopen < 0) {
            return false;
        }
        nextReopen = now + REOPEN_BACKOFF_NANOS;
        return true;
    }

    /** The NICs were reopened and their resources re-created: the group serves again. */
    void up() {
        downError = null;
        failure = null;
    }
}
