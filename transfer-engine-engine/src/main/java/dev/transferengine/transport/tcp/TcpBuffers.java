package dev.transferengine.transport.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;

/**
 * The direct read and write buffers of a domain's connections, reused: a connection takes them once its peer is
 * authenticated (or, for our own connections, when it opens) and gives them back when it closes. At most
 * {@link #MAX_FREE} of each size wait for reuse; the rest go back to the garbage collector. Worker thread only.
 */
final class TcpBuffers {

    /** Free buffers kept per size: enough for a burst of reconnects, little enough to idle cheaply. */
    static final int MAX_FREE = 16;

    /** The sizes connections use: the large side of each direction and the small one. */
    static final int LARGE = 256 * 1024;

    static final int SMALL = 64 * 1024;

    private final ArrayDeque<ByteBuffer> large = new ArrayDeque<>();
    private final ArrayDeque<ByteBuffer> small = new ArrayDeque<>();

    /**
     * A cleared little-endian buffer of {@code capacity} ({@link #LARGE} or {@link #SMALL}) bytes.
     *
     * @throws IOException if the JVM's direct memory is exhausted: that connection fails, the domain lives on
     */
    ByteBuffer take(final int capacity) throws IOException {
        final ByteBuffer pooled = free(capacity).pollFirst();
        if (pooled != null) {
            return pooled.clear();
        }
        try {
            return ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
        } catch (final OutOfMemoryError e) {
            // Direct memory reservation failed: a limit of this one allocation, not a broken JVM.
            throw new IOException("no direct memory left for a connection buffer of " + capacity + " bytes", e);
        }
    }

    void giveBack(final ByteBuffer buffer) {
        final ArrayDeque<ByteBuffer> free = free(buffer.capacity());
        if (free.size() < MAX_FREE) {
            free.addLast(buffer);
        }
    }

    int free() {
        return large.size() + small.size();
    }

    private ArrayDeque<ByteBuffer> free(final int capacity) {
        return capacity == LARGE ? large : small;
    }
}
