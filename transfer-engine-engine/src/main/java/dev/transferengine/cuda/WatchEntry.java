package dev.transferengine.cuda;

import dev.transferengine.UvmWatchListener;
import dev.transferengine.UvmWatcher;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/** One allocation of a slot: the {@link UvmWatcher} a user holds. A reused slot gets a new entry and id. */
final class WatchEntry implements UvmWatcher {

    private static final VarHandle SLOT = ValueLayout.JAVA_LONG.varHandle();

    final int slot;
    final int id;
    final UvmWatchListener listener;
    private final MemorySegment page;
    private final long offset;
    private final long devicePointer;
    private final UvmSlotTable table;
    private volatile boolean open = true;

    /** The value last handed to the callback thread; read and written by the polling thread only. */
    long lastSeen;

    WatchEntry(
            final int slot,
            final int id,
            final UvmWatchListener listener,
            final SlotPage page,
            final UvmSlotTable table) {
        this.slot = slot;
        this.id = id;
        this.listener = listener;
        this.page = page.host();
        this.offset = (long) (slot % SlotPage.SLOTS) * SlotPage.SLOT_BYTES;
        this.devicePointer = page.devicePointer() + offset;
        this.table = table;
    }

    /** Acquire read of the slot: the GPU's store and everything it published before are visible after it. */
    long read() {
        return (long) SLOT.getAcquire(page, offset);
    }

    void reset() {
        SLOT.setRelease(page, offset, 0L);
    }

    void markClosed() {
        open = false;
    }

    @Override
    public long devicePointer() {
        return devicePointer;
    }

    @Override
    public long value() {
        if (!open) {
            return 0;
        }
        // a close racing this read frees the page only after closing its arena: the read then fails, never crashes
        return read();
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public void close() {
        table.release(this);
    }

    @Override
    public String toString() {
        return "UvmWatcher[slot " + slot + ", 0x" + Long.toHexString(devicePointer) + (open ? "" : ", closed") + "]";
    }
}
