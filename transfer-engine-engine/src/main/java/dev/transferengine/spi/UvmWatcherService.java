package dev.transferengine.spi;

import dev.transferengine.UvmWatchListener;
import dev.transferengine.UvmWatcher;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.EngineClosedException;

/**
 * One device's UVM watchers, opened by a {@link UvmWatcherProvider}: hands out watched slots and calls their
 * listeners when its owner drives {@link #dispatch(int)}.
 */
public interface UvmWatcherService extends AutoCloseable {

    /**
     * Allocates a slot (initially 0) watched for changes; each change calls {@code listener} from
     * {@link #dispatch(int)}. Any thread; may block while a new page of slots is allocated.
     *
     * @param listener called once per observed change
     * @return the watcher; close it to free its slot
     *
     * @throws EngineClosedException if the service is closed
     * @throws BackPressureException if every slot is in use
     */
    UvmWatcher allocate(UvmWatchListener listener);

    /**
     * Calls the listeners of up to {@code limit} queued changes. From one thread at a time; never blocks.
     *
     * @param limit the most changes to hand out
     * @return changes handled (0 = idle)
     */
    int dispatch(int limit);

    /** Stops the polling thread, closes every watcher and frees the memory. Idempotent; blocks for the joins. */
    @Override
    void close();
}
