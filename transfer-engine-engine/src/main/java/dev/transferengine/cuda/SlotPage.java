package dev.transferengine.cuda;

import dev.transferengine.spi.StagingBuffer;

import java.lang.foreign.MemorySegment;

/**
 * One page of watcher slots: host view, the address kernels use, and what frees it.
 *
 * @param host          the page as the polling thread reads it
 * @param devicePointer the page's address on the device
 * @param owner         the allocation, closed when the service closes
 */
record SlotPage(MemorySegment host, long devicePointer, StagingBuffer owner) {

    static final int BYTES = 4096;
    static final int SLOT_BYTES = Long.BYTES;
    static final int SLOTS = BYTES / SLOT_BYTES;
}
