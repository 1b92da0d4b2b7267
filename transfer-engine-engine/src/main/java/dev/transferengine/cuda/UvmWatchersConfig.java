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
 * @param maxWatchers    slots the service may hand out (512 per 4 KiB page; pages are allocated on demand)
 * @param queueBytes     bytes of the change queue from the polling to the callback thread (a power of two); when
 *                       full, changes coalesce in the slot until there is room, so none is lost
 */
public record UvmWatchersConfig(OptionalInt pollCpu, IdleStrategyKind pollIdle, boolean callbackThread,
                                IdleStrategyKind callbackIdle, int maxWatchers, int queueBytes) {

    public UvmWatchersConfig {
        if (maxWatchers < 1) {
            throw new IllegalArgumentException("maxWatchers must be >= 1, was " + maxWatchers);
        }
        if (Integer.bitCount(queueBytes) != 1 || queueBytes < 1024) {
            throw new IllegalArgumentException("queueBytes must be a power of two >= 1024, was " + queueBytes);
        }
    }

    /** Unpinned, backing-off threads, an own callback thread, 4096 watchers, a 64 KiB queue. */
    public static UvmWatchersConfig defaults() {
        return new UvmWatchersConfig(OptionalInt.empty(), IdleStrategyKind.BACKOFF, true, IdleStrategyKind.BACKOFF,
            4096, 64 * 1024);
    }

    public UvmWatchersConfig withPollCpu(final int cpu) {
        return new UvmWatchersConfig(OptionalInt.of(cpu), pollIdle, callbackThread, callbackIdle, maxWatchers,
            queueBytes);
    }

    public UvmWatchersConfig withPollIdle(final IdleStrategyKind value) {
        return new UvmWatchersConfig(pollCpu, value, callbackThread, callbackIdle, maxWatchers, queueBytes);
    }

    /** The caller drives {@link UvmWatchers#dispatch(int)} on its own callback thread. */
    public UvmWatchersConfig withoutCallbackThread() {
        return new UvmWatchersConfig(pollCpu, pollIdle, false, callbackIdle, maxWatchers, queueBytes);
    }

    public UvmWatchersConfig withCallbackIdle(final IdleStrategyKind value) {
        return new UvmWatchersConfig(pollCpu, pollIdle, callbackThread, value, maxWatchers, queueBytes);
    }

    public UvmWatchersConfig withMaxWatchers(final int value) {
        return new UvmWatchersConfig(pollCpu, pollIdle, callbackThread, callbackIdle, value, queueBytes);
    }

    public UvmWatchersConfig withQueueBytes(final int value) {
        return new UvmWatchersConfig(pollCpu, pollIdle, callbackThread, callbackIdle, maxWatchers, value);
    }
}
