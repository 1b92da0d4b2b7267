package dev.transferengine.cuda;

import java.nio.ByteBuffer;

import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * Slot changes from the polling thread (the one producer) to the callback thread (the one consumer), without
 * allocating. A change is written in place:
 *
 * <pre>
 *  0               4               8                              16                              24
 *  +---------------+---------------+------------------------------+------------------------------+
 *  |     slot      |   entry id    |          old value           |          new value           |
 *  +---------------+---------------+------------------------------+------------------------------+
 * </pre>
 */
final class UvmChangeQueue {

    static final int MSG_CHANGE = 1;
    static final int SLOT_OFFSET = 0;
    static final int ID_OFFSET = 4;
    static final int OLD_OFFSET = 8;
    static final int NEW_OFFSET = 16;
    static final int LENGTH = 24;

    private final RingBuffer ring;
    private final UnsafeBuffer buffer;

    UvmChangeQueue(final int capacity) {
        this.buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(capacity + RingBufferDescriptor.TRAILER_LENGTH));
        this.ring = new OneToOneRingBuffer(buffer);
    }

    /** Polling thread only. False when the queue is full. */
    boolean offer(final int slot, final int id, final long oldValue, final long newValue) {
        final int index = ring.tryClaim(MSG_CHANGE, LENGTH);
        if (index < 0) {
            return false;
        }
        buffer.putInt(index + SLOT_OFFSET, slot);
        buffer.putInt(index + ID_OFFSET, id);
        buffer.putLong(index + OLD_OFFSET, oldValue);
        buffer.putLong(index + NEW_OFFSET, newValue);
        ring.commit(index);
        return true;
    }

    /** Consumer thread only: hands up to {@code limit} changes to {@code handler}. */
    int drain(final MessageHandler handler, final int limit) {
        return ring.read(handler, limit);
    }

    boolean isEmpty() {
        return ring.size() == 0;
    }
}
