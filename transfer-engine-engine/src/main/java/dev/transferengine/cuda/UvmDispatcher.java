package dev.transferengine.cuda;

import dev.transferengine.nativeaccess.CpuAffinity;

import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicLong;

import org.agrona.concurrent.Agent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The callback side: takes changes off the queue and calls listeners. Runs on one thread at a time, either the
 * service's own callback thread (as an {@link Agent}) or the engine's, through {@link UvmWatchers#dispatch(int)}.
 * Changes for watchers released meanwhile are dropped; the entry id tells a reused slot's new watcher apart.
 */
final class UvmDispatcher implements Agent {

    private static final Logger LOG = LoggerFactory.getLogger(UvmDispatcher.class);
    private static final int DRAIN_LIMIT = 256;

    private final UvmSlotTable table;
    private final UvmChangeQueue queue;
    // written by the one dispatching thread only, read by any
    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong listenerErrors = new AtomicLong();

    private final OptionalInt cpu;

    UvmDispatcher(final UvmSlotTable table, final UvmChangeQueue queue, final OptionalInt cpu) {
        this.table = table;
        this.queue = queue;
        this.cpu = cpu;
    }

    /** On the service's own callback thread only. */
    @Override
    public void onStart() {
        CpuAffinity.pinCurrentThread(cpu, "UVM callback thread");
    }

    int dispatch(final int limit) {
        int work = 0;
        UvmChangeQueue.Change change;
        while (work < limit && (change = queue.poll()) != null) {
            final int slot = change.slot;
            final int id = change.id;
            final long oldValue = change.oldValue;
            final long newValue = change.newValue;
            queue.recycle(change);
            deliver(slot, id, oldValue, newValue);
            work++;
        }
        return work;
    }

    @Override
    public int doWork() {
        return dispatch(DRAIN_LIMIT);
    }

    private void deliver(final int slot, final int id, final long oldValue, final long newValue) {
        final WatchEntry entry = table.entry(slot);
        if (entry == null || entry.id != id || !entry.isOpen()) {
            return;
        }
        boolean keep = false;
        try {
            keep = entry.listener.onChange(oldValue, newValue);
        } catch (final RuntimeException e) {
            listenerErrors.incrementAndGet();
            LOG.warn("UVM watcher listener of {} threw; the watcher is released", entry, e);
        } finally {
            delivered.lazySet(delivered.get() + 1);
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
