package dev.transferengine.cuda;

import dev.transferengine.IdleStrategyKind;

import java.util.OptionalInt;

/**
 * How a {@link UvmWatchers} service runs.
 *
 * @param pollCpu        CPU to pin the polling thread to, if any (best effort; a failure is logged)
 * @param pollIdle       how the polling thread waits when no slot changed: {@link IdleStrategyKind#SPIN} gives the
 *                       lowest latency and burns a core (pin it); {@link IdleStrategyKind#BACKOFF} parks up to 1 ms
 * @param callbackThread whether the service runs its own callback thread; false when the caller (the engine's
 *                       callback thread) drives {@link UvmWatchers#dispatch(int)} itself
 * @param callbackIdle   how the service's own callback thread waits
 * @param callbackCpu    CPU to pin the service's own callback thread to, if any. Threads inherit the affinity of
 *                       the thread that starts them, so set it (or pollCpu) when the caller is itself pinned
 * @param maxWatchers    slots the service may hand out (512 per 4 KiB page; pages are allocated on demand)
 * @param queueCapacity  changes that may wait for the callback thread; when the queue is full, further changes
 *                       stay in their slots and arrive coalesced once there is room, so none is lost
 */
public record UvmWatchersConfig(
        OptionalInt pollCpu,
        IdleStrategyKind pollIdle,
        boolean callbackThread,
        IdleStrategyKind callbackIdle,
        OptionalInt callbackCpu,
        int maxWatchers,
        int queueCapacity) {

    public UvmWatchersConfig {
        if (maxWatchers < 1) {
            throw new IllegalArgumentException("maxWatchers must be >= 1, was " + maxWatchers);
        }
        if (queueCapacity < 1) {
            throw new IllegalArgumentException("queueCapacity must be >= 1, was " + queueCapacity);
        }
    }

    /** Unpinned, backing-off threads, an own callback thread, 4096 watchers, 4096 queued changes. */
    public static UvmWatchersConfig defaults() {
        return new UvmWatchersConfig(
                OptionalInt.empty(),
                IdleStrategyKind.BACKOFF,
                true,
                IdleStrategyKind.BACKOFF,
                OptionalInt.empty(),
                4096,
                4096);
    }

    public UvmWatchersConfig withPollCpu(final int cpu) {
        return new UvmWatchersConfig(
                OptionalInt.of(cpu), pollIdle, callbackThread, callbackIdle, callbackCpu, maxWatchers, queueCapacity);
    }

    public UvmWatchersConfig withPollIdle(final IdleStrategyKind value) {
        return new UvmWatchersConfig(
                pollCpu, value, callbackThread, callbackIdle, callbackCpu, maxWatchers, queueCapacity);
    }

    /** The caller drives {@link UvmWatchers#dispatch(int)} on its own callback thread. */
    public UvmWatchersConfig withoutCallbackThread() {
        return new UvmWatchersConfig(pollCpu, pollIdle, false, callbackIdle, callbackCpu, maxWatchers, queueCapacity);
    }

    public UvmWatchersConfig withCallbackIdle(final IdleStrategyKind value) {
        return new UvmWatchersConfig(pollCpu, pollIdle, callbackThread, value, callbackCpu, maxWatchers, queueCapacity);
    }

    public UvmWatchersConfig withCallbackCpu(final int cpu) {
        return new UvmWatchersConfig(
                pollCpu, pollIdle, callbackThread, callbackIdle, OptionalInt.of(cpu), maxWatchers, queueCapacity);
    }

    public UvmWatchersConfig withMaxWatchers(final int value) {
        return new UvmWatchersConfig(
                pollCpu, pollIdle, callbackThread, callbackIdle, callbackCpu, value, queueCapacity);
    }

    public UvmWatchersConfig withQueueBytes(final int value) {
        return new UvmWatchersConfig(pollCpu, pollIdle, callbackThread, callbackIdle, callbackCpu, maxWatchers, value);
    }
}
