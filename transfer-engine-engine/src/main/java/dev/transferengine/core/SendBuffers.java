package dev.transferengine.core;

import dev.transferengine.exceptions.InvalidRequestException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Native buffers that hold the copies {@code send} makes, so the caller may reuse its own buffer at once. Sizes
 * are powers of two from 64 B; freed buffers are kept for reuse, and all of them go with the engine's arena.
 */
final class SendBuffers implements AutoCloseable {

    static final int MAX_MESSAGE = 64 << 20;
    private static final int MIN_SHIFT = 6;
    private static final int CLASSES = Integer.numberOfTrailingZeros(MAX_MESSAGE) - MIN_SHIFT + 1;

    private final Arena arena = Arena.ofShared();

    @SuppressWarnings("unchecked")
    private final ConcurrentLinkedQueue<MemorySegment>[] free =
            (ConcurrentLinkedQueue<MemorySegment>[]) new ConcurrentLinkedQueue<?>[CLASSES];

    SendBuffers() {
        for (int i = 0; i < CLASSES; i++) {
            free[i] = new ConcurrentLinkedQueue<>();
        }
    }

    /** A buffer of exactly {@code length} bytes (a slice of a pooled one) holding a copy of {@code message}. */
    MemorySegment copyOf(final MemorySegment message) {
        final long length = message.byteSize();
        if (length > MAX_MESSAGE) {
            throw new InvalidRequestException("a send carries at most " + MAX_MESSAGE + " bytes, got " + length
                    + "; use a one-sided write for bulk data");
        }
        final int sizeClass = sizeClass(length);
        MemorySegment buffer = free[sizeClass].poll();
        if (buffer == null) {
            buffer = arena.allocate(1L << (sizeClass + MIN_SHIFT), 64);
        }
        MemorySegment.copy(message, 0, buffer, 0, length);
        return buffer.asSlice(0, length);
    }

    /** Returns a buffer made by {@link #copyOf(MemorySegment)}. */
    @SuppressWarnings("restricted") // widens a slice back to the pooled buffer it was cut from, in the same arena
    void release(final MemorySegment slice) {
        final int sizeClass = sizeClass(slice.byteSize());
        free[sizeClass].offer(
                MemorySegment.ofAddress(slice.address()).reinterpret(1L << (sizeClass + MIN_SHIFT), arena, null));
    }

    private static int sizeClass(final long length) {
        final int shift = Math.max(MIN_SHIFT, 64 - Long.numberOfLeadingZeros(Math.max(1, length) - 1));
        return shift - MIN_SHIFT;
    }

    @Override
    public void close() {
        arena.close();
    }
}
