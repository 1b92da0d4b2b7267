package dev.transferengine.transport.tcp;

import dev.transferengine.spi.DeviceCopyStream;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Where one inbound connection places a payload bound for a device region: into the domain's receive chunks, one
 * after another, each copied to the device as soon as it is full (or the payload ends), so the network fills the
 * next chunk while the previous one is copied. When no chunk is free the connection stops reading until one is.
 * Worker thread only.
 */
final class TcpLanding {

    private final TcpStaging staging;
    private @Nullable TcpChunk chunk;
    private @Nullable TcpMemory memory;
    private int device;
    /** Device address the current chunk's first byte goes to. */
    private long address;
    /** Payload bytes not yet in a chunk. */
    private long remaining;

    private int fill;
    private long ticket;

    TcpLanding(final TcpStaging staging) {
        this.staging = staging;
    }

    /** A payload of {@code length > 0} bytes for {@code memory} at {@code at} begins. */
    void start(final TcpMemory target, final long at, final long length) {
        memory = target;
        device = target.device();
        address = target.segment().address() + at;
        remaining = length;
        fill = 0;
        ticket = 0;
    }

    /** A socket-readable window into the current chunk, or null while no chunk is free. */
    @Nullable ByteBuffer window() {
        final TcpChunk current = current();
        if (current == null) {
            return null;
        }
        final ByteBuffer view = current.view;
        view.limit((int) Math.min(view.capacity(), fill + remaining)).position(fill);
        return view;
    }

    /**
     * {@code bytes} arrived in the window. A full chunk is copied to the device only if the memory still holds its
     * allocation ({@link TcpStaging#holds}); otherwise the chunk is dropped and the memory retired, which the
     * connection sees and refuses the request ({@code REGION_DEREGISTERED}).
     */
    void advance(final int bytes) {
        final TcpChunk current = Objects.requireNonNull(chunk);
        fill += bytes;
        remaining -= bytes;
        if (fill == current.segment.byteSize() || remaining == 0) {
            final TcpMemory target = Objects.requireNonNull(memory);
            if (TcpStaging.holds(target)) {
                ticket = staging.copyIn(current, target, address, fill);
                address += fill;
            } else {
                staging.giveBackIn(current);
            }
            fill = 0;
            chunk = null;
        }
    }

    /**
     * Places {@code length} buffered bytes at {@code position} of {@code target}: host memory takes them all, a device
     * payload (the one {@link #start} began) what free chunks hold. Returns how many it took.
     */
    int place(
            final TcpMemory target,
            final MemorySegment source,
            final long sourceOffset,
            final long position,
            final int length) {
        if (target.device() < 0) {
            target.copyIn(source, sourceOffset, position, length);
            return length;
        }
        int taken = 0;
        int step;
        while (taken < length && (step = copyIn(source, sourceOffset + taken, length - taken)) > 0) {
            taken += step;
        }
        return taken;
    }

    /** Copies up to {@code length} buffered bytes into the current chunk; returns how many, 0 if none is free. */
    int copyIn(final MemorySegment source, final long sourceOffset, final int length) {
        final TcpChunk current = current();
        if (current == null) {
            return 0;
        }
        final int taken = (int) Math.min(length, Math.min(current.segment.byteSize() - fill, remaining));
        MemorySegment.copy(source, sourceOffset, current.segment, fill, taken);
        advance(taken);
        return taken;
    }

    /** The stream of the payload's copies; with {@link #ticket()}, done once the whole payload is on the device. */
    DeviceCopyStream stream() {
        return staging.toDevice(device);
    }

    /** The ticket of the payload's last copy; valid once all its bytes arrived. */
    long ticket() {
        return ticket;
    }

    /** The payload will not be placed (region gone, connection lost): gives back the chunk being filled. */
    void abandon() {
        if (chunk != null) {
            staging.giveBackIn(chunk);
            chunk = null;
        }
        remaining = 0;
        memory = null;
    }

    private @Nullable TcpChunk current() {
        if (chunk == null) {
            chunk = staging.takeIn();
        }
        return chunk;
    }
}
