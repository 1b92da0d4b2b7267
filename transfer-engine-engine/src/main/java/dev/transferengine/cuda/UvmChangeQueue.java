package dev.transferengine.cuda;

import org.jctools.queues.atomic.SpscAtomicArrayQueue;

/**
 * Slot changes from the polling thread (the one producer) to the callback thread (the one consumer), without
 * allocating: a fixed set of {@link Change} records travels to the consumer on one single-producer queue and back
 * to the producer on another. When every record is in flight the queue is full.
 */
final class UvmChangeQueue {

    /** One change; owned by whichever side took it off a queue. */
    static final class Change {
        int slot;
        int id;
        long oldValue;
        long newValue;
    }

    private final SpscAtomicArrayQueue<Change> changes;
    private final SpscAtomicArrayQueue<Change> free;

    UvmChangeQueue(final int capacity) {
        this.changes = new SpscAtomicArrayQueue<>(capacity);
        this.free = new SpscAtomicArrayQueue<>(capacity);
        for (int i = 0; i < capacity; i++) {
            free.offer(new Change());
        }
    }

    /** Polling thread only. False when the queue is full. */
    boolean offer(final int slot, final int id, final long oldValue, final long newValue) {
        final Change change = free.relaxedPoll();
        if (change == null) {
            return false;
        }
        change.slot = slot;
        change.id = id;
        change.oldValue = oldValue;
        change.newValue = newValue;
        changes.offer(change);
        return true;
    }

    /** Consumer thread only: the oldest change, or null. Hand it back with {@link #recycle(Change)}. */
    Change poll() {
        return changes.relaxedPoll();
    }

    /** Consumer thread only. */
    void recycle(final Change change) {
        free.offer(change);
    }
}
