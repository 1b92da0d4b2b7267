package dev.transferengine;

/**
 * Told when a GPU changed the 64-bit slot of a {@link UvmWatcher}. Runs on the callback thread, never on the polling
 * thread, one call at a time per engine.
 *
 * <p>A GPU may store faster than the slot is polled: intermediate values can then be skipped, so one call may span
 * several stores. {@code oldValue} is always the {@code newValue} of the previous call (0 for the first), so the
 * listener can tell how far the value moved.
 */
@FunctionalInterface
public interface UvmWatchListener {

    /**
     * Reports a new value in the watched slot.
     *
     * @param oldValue the value seen before (0 for a fresh watcher)
     * @param newValue the value seen now, never equal to {@code oldValue}
     * @return true to keep watching; false releases the slot (reset to 0), as does throwing
     */
    boolean onChange(long oldValue, long newValue);
}
