package dev.transferengine.cuda;

import java.util.concurrent.atomic.AtomicLong;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.MessageHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The callback side: takes changes off the queue and calls listeners. Runs on one thread at a time, either the
 * service's own callback thread (as an {@link Agent}) or the engine's, through {@link UvmWatchers#dispatch(int)}.
 * Changes for watchers released meanwhile are dropped; the entry id tells a reused slot's new watcher apart.
 */
final class UvmDispatcher implements Agent, MessageHandler {

    private static final Logger LOG = LoggerFactory.getLogger(UvmDispatcher.class);
    private static final int DRAIN_LIMIT = 256;

    private final UvmSlotTable table;
    private final UvmChangeQueue queue;
    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong listenerErrors = new AtomicLong();

    UvmDispatcher(final UvmSlotTable table, final UvmChangeQueue queue) {
        this.table = table;
        this.queue = queue;
    }

    int dispatch(final int limit) {
        return queue.drain(this, limit);
    }

    @Override
    public int doWork() {
        return dispatch(DRAIN_LIMIT);
    }

    @Override
    public void onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length) {
        final WatchEntry entry = table.entry(buffer.getInt(index + UvmChangeQueue.SLOT_OFFSET));
        if (entry == null || entry.id != buffer.getInt(index + UvmChangeQueue.ID_OFFSET) || !entry.isOpen()) {
            return;
        }
        final long oldValue = buffer.getLong(index + UvmChangeQueue.OLD_OFFSET);
        final long newValue = buffer.getLong(index + UvmChangeQueue.NEW_OFFSET);
        boolean keep = false;
        try {
            keep = entry.listener.onChange(oldValue, newValue);
        } catch (final RuntimeException e) {
            listenerErrors.incrementAndGet();
            LOG.warn("UVM watcher listener of {} threw; the watcher is released", entry, e);
        } finally {
            delivered.incrementAndGet();
            if (!keep) {
                table.release(entry);
            }
        }
    }

    long delivered() {
        return delivered.get();
    }

    long listenerErrors() {
        return listenerErrors.get();
    }

    @Override
    public String roleName() {
        return "te-uvm-callback";
    }
}
