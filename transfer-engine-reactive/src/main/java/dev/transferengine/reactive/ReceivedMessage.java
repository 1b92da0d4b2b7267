package dev.transferengine.reactive;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * A two-sided message, copied out of the engine's receive buffer so that it outlives the buffer, which went back
 * to the engine as soon as the copy was made.
 */
public final class ReceivedMessage {

    private static final int PREVIEW_BYTES = 16;

    private final byte[] bytes;

    private ReceivedMessage(final byte[] bytes) {
        this.bytes = bytes;
    }

    /** Copies {@code buffer}. Runs on the engine's callback thread; allocates one array. */
    static ReceivedMessage copyOf(final MemorySegment buffer) {
        return new ReceivedMessage(buffer.toArray(ValueLayout.JAVA_BYTE));
    }

    /**
     * How long the message is.
     *
     * @return the length of the message in bytes
     */
    public int length() {
        return bytes.length;
    }

    /**
     * The message bytes. Allocates a copy on each call; use {@link #asByteBuffer()} to read without one.
     *
     * @return a copy of the message bytes
     */
    public byte[] toByteArray() {
        return bytes.clone();
    }

    /**
     * A read-only view of the message bytes, without a copy.
     *
     * @return a new read-only buffer over the bytes, positioned at 0
     */
    public ByteBuffer asByteBuffer() {
        return ByteBuffer.wrap(bytes).asReadOnlyBuffer();
    }

    @Override
    public boolean equals(final Object other) {
        return other instanceof ReceivedMessage that && Arrays.equals(bytes, that.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        final int shown = Math.min(bytes.length, PREVIEW_BYTES);
        return "ReceivedMessage[" + bytes.length + " bytes: " + HexFormat.of().formatHex(bytes, 0, shown)
                + (shown < bytes.length ? "...]" : "]");
    }
}
