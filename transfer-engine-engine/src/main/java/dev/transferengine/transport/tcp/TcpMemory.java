package dev.transferengine.transport.tcp;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import org.jspecify.annotations.Nullable;

/**
 * Local memory that incoming payloads are placed into: a registered region or a posted receive buffer. This is
 * the one place that turns a segment into socket-readable windows, so that staging for other kinds of memory
 * can be added here. The {@link ByteBuffer} views are made once; a read re-aims one of them, so placing bytes
 * allocates nothing. Worker thread only.
 */
final class TcpMemory {

    /** Views cover at most 1 GiB each, so regions larger than a ByteBuffer can address still work. */
    private static final int VIEW_SHIFT = 30;
    private static final long VIEW_SIZE = 1L << VIEW_SHIFT;

    private final MemorySegment segment;
    private final ByteBuffer[] views;
    private final TcpStaging.@Nullable Mirror mirror;
    private boolean live = true;

    TcpMemory(final MemorySegment segment) {
        this(segment, null);
    }

    /** Memory staged for a device: {@code segment} is the pinned mirror that payloads are placed into. */
    TcpMemory(final MemorySegment segment, final TcpStaging.@Nullable Mirror mirror) {
        this.segment = segment;
        this.mirror = mirror;
        final long size = segment.byteSize();
        this.views = new ByteBuffer[(int) ((size + VIEW_SIZE - 1) >>> VIEW_SHIFT)];
        for (int i = 0; i < views.length; i++) {
            final long start = (long) i << VIEW_SHIFT;
            views[i] = segment.asSlice(start, Math.min(VIEW_SIZE, size - start)).asByteBuffer();
        }
    }

    /** The device this memory mirrors, or null for host memory. */
    TcpStaging.@Nullable Mirror mirror() {
        return mirror;
    }

    /** Where payloads are placed and, for a mirror, sent from. */
    MemorySegment segment() {
        return segment;
    }

    long size() {
        return segment.byteSize();
    }

    /** False once deregistered: bytes still arriving for it must not land. */
    boolean live() {
        return live;
    }

    void retire() {
        live = false;
    }

    /** True if {@code [offset, offset + length)} lies inside this memory; safe against overflow. */
    boolean contains(final long offset, final long length) {
        return offset >= 0 && length >= 0 && offset <= size() && length <= size() - offset;
    }

    /**
     * A view whose position is {@code from} and whose limit is {@code to}, or the end of the view holding
     * {@code from} if that comes first. Requires {@code from < to <= size()}.
     */
    ByteBuffer window(final long from, final long to) {
        final int index = (int) (from >>> VIEW_SHIFT);
        final long viewStart = (long) index << VIEW_SHIFT;
        final ByteBuffer view = views[index];
        view.limit((int) Math.min(to - viewStart, view.capacity()));
        view.position((int) (from - viewStart));
        return view;
    }

    /** Copies bytes that arrived in a read buffer into place. */
    void copyIn(final MemorySegment source, final long sourceOffset, final long at, final long length) {
        MemorySegment.copy(source, sourceOffset, segment, at, length);
    }
}
