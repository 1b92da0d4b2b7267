package dev.transferengine.cuda;

import dev.transferengine.UvmWatchListener;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.EngineClosedException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.agrona.collections.IntArrayList;
import org.jspecify.annotations.Nullable;

/**
 * Hands out and takes back slots. Changes happen under this object's lock (API threads, the callback thread); the
 * polling thread reads the copy-on-write {@link #active()} snapshot and the callback thread looks entries up by slot
 * without locking.
 */
final class UvmSlotTable {

    private static final WatchEntry[] NONE = new WatchEntry[0];

    private final SlotPageSource source;
    private final int capacity;
    private final List<SlotPage> pages = new ArrayList<>();
    private final IntArrayList freeSlots = new IntArrayList();
    private final AtomicReferenceArray<WatchEntry> bySlot;
    private volatile WatchEntry[] active = NONE;
    private int nextSlot;
    private int nextId;
    private boolean closed;

    UvmSlotTable(final SlotPageSource source, final int capacity) {
        this.source = source;
        this.capacity = capacity;
        this.bySlot = new AtomicReferenceArray<>(capacity);
    }

    /** Takes a free slot (allocating a page when every page is in use) and starts watching it. Blocks on a page. */
    synchronized WatchEntry allocate(final UvmWatchListener listener) {
        if (closed) {
            throw new EngineClosedException("UVM watchers are closed");
        }
        final int slot;
        if (!freeSlots.isEmpty()) {
            slot = freeSlots.removeAt(freeSlots.size() - 1);
        } else if (nextSlot < capacity) {
            if (nextSlot == pages.size() * SlotPage.SLOTS) {
                pages.add(source.allocate());
            }
            slot = nextSlot++;
        } else {
            throw new BackPressureException(
                    "all " + capacity + " UVM watcher slots are in use; close a watcher or raise maxWatchers");
        }
        final WatchEntry entry = new WatchEntry(slot, nextId++, listener, pages.get(slot / SlotPage.SLOTS), this);
        // a kernel of the previous owner that kept storing after its close left its last value here: the new
        // watcher starts at 0 all the same, and never sees that value as a change of its own
        entry.reset();
        bySlot.set(slot, entry);
        final WatchEntry[] grown = Arrays.copyOf(active, active.length + 1);
        grown[grown.length - 1] = entry;
        active = grown;
        return entry;
    }

    /** Stops watching, resets the slot to 0 and frees it. Idempotent. Any thread. */
    synchronized void release(final WatchEntry entry) {
        if (!entry.isOpen()) {
            return;
        }
        entry.markClosed();
        if (closed) {
            return;
        }
        final WatchEntry[] current = active;
        final WatchEntry[] shrunk = new WatchEntry[current.length - 1];
        int j = 0;
        for (final WatchEntry e : current) {
            if (e != entry) {
                shrunk[j++] = e;
            }
        }
        active = shrunk;
        bySlot.set(entry.slot, null);
        entry.reset();
        freeSlots.addInt(entry.slot);
    }

    /** The entries to poll now. Any thread; never blocks. */
    WatchEntry[] active() {
        return active;
    }

    /** The live entry on {@code slot}, or null. Any thread; never blocks. */
    @Nullable WatchEntry entry(final int slot) {
        return bySlot.get(slot);
    }

    /** Number of watchers now. */
    int size() {
        return active.length;
    }

    /** Number of pages allocated so far. */
    synchronized int pageCount() {
        return pages.size();
    }

    /** Closes every watcher and frees the pages; the polling thread must have stopped. */
    void close() {
        closeWatchers();
        freePages();
    }

    /**
     * Closes every watcher (they read 0 from now on) but keeps the pages, which kernels may still store into; the
     * polling thread must have stopped. Idempotent.
     */
    synchronized void closeWatchers() {
        if (closed) {
            return;
        }
        closed = true;
        for (final WatchEntry entry : active) {
            entry.markClosed();
        }
        active = NONE;
    }

    /** Frees the pages, after {@link #closeWatchers()} and once no kernel stores into them any more. Idempotent. */
    synchronized void freePages() {
        RuntimeException failure = null;
        for (final SlotPage page : pages) {
            try {
                page.owner().close();
            } catch (final RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        pages.clear();
        if (failure != null) {
            throw failure;
        }
    }
}
