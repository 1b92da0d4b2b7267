package dev.transferengine.transport.tcp;

import dev.transferengine.RegionAccess;
import dev.transferengine.spi.DeviceMemory;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import org.jspecify.annotations.Nullable;

/**
 * Local memory that incoming payloads are placed into: a registered region or a posted receive buffer. This is
 * the one place that turns a segment into socket-readable windows; device memory has none and is staged by
 * {@link TcpLanding}. The {@link ByteBuffer} views are made once; a read re-aims one of them, so placing bytes
 * allocates nothing. Worker thread only.
 */
final class TcpMemory {

    /** Views cover at most 1 GiB each, so regions larger than a ByteBuffer can address still work. */
    private static final int VIEW_SHIFT = 30;

    private static final long VIEW_SIZE = 1L << VIEW_SHIFT;

    private final MemorySegment segment;
    private final ByteBuffer[] views;
    private final int device;
    /** Device memory: the provider that names its allocation, and the allocation's id at registration. */
    private final @Nullable DeviceMemory provider;

    private final long allocationId;
    private boolean live = true;
    /** Served reads' READ_DATA sent from this host memory and not yet ended: the connection reads it to send them. */
    private int served;
    /** What peers may do with it; a receive buffer is only ever written, by SENDs. */
    private RegionAccess access = RegionAccess.READ_WRITE;

    TcpMemory(final MemorySegment segment) {
        this(segment, -1, null);
    }

    private TcpMemory(final MemorySegment segment, final int device, final @Nullable DeviceMemory provider) {
        this.segment = segment;
        this.device = device;
        this.provider = provider;
        this.allocationId =
                provider == null ? DeviceMemory.UNKNOWN_ALLOCATION : provider.allocationId(device, segment.address());
        final long size = segment.byteSize();
        // Device memory is never touched from the host: payloads go through staging chunks, so it gets no views.
        this.views = new ByteBuffer[device >= 0 ? 0 : (int) ((size + VIEW_SIZE - 1) >>> VIEW_SHIFT)];
        for (int i = 0; i < views.length; i++) {
            final long start = (long) i << VIEW_SHIFT;
            views[i] = segment.asSlice(start, Math.min(VIEW_SIZE, size - start)).asByteBuffer();
        }
    }

    /**
     * Memory of device {@code ordinal}, placed into and sent from through {@link TcpStaging}'s chunks; {@code
     * provider} names the allocation holding it now, which {@link #loss()} compares against before each copy.
     */
    static TcpMemory device(final MemorySegment segment, final int ordinal, final DeviceMemory provider) {
        return new TcpMemory(segment, ordinal, provider);
    }

    /** The device ordinal, or -1 for host memory. */
    int device() {
        return device;
    }

    /** The registered memory; for a device, its addresses are device addresses. */
    MemorySegment segment() {
        return segment;
    }

    long size() {
        return segment.byteSize();
    }

    /** What peers may do with this memory, as registered. */
    RegionAccess access() {
        return access;
    }

    /** Sets what peers may do with this memory; returns it. */
    TcpMemory access(final RegionAccess value) {
        access = value;
        return this;
    }

    /** False once deregistered: bytes still arriving for it must not land. */
    boolean live() {
        return live;
    }

    void retire() {
        live = false;
    }

    /**
     * Null while the memory is still what was registered: its segment's scope is alive and, for device memory, the
     * provider still places its address in the allocation it had at registration (or cannot tell); otherwise how
     * it was lost. Asked right before each staged copy into or out of device memory, so that a copy never goes to an
     * address the application freed and the driver may have handed to a new allocation (docs/security.md, "Freed
     * memory"). One provider call (cuda: one {@code cuPointerGetAttribute}); worker thread.
     */
    @Nullable String loss() {
        if (!segment.scope().isAlive()) {
            return "its arena was closed while registered";
        }
        if (provider == null || allocationId == DeviceMemory.UNKNOWN_ALLOCATION) {
            return null;
        }
        final long now = provider.allocationId(device, segment.address());
        return now == allocationId || now == DeviceMemory.UNKNOWN_ALLOCATION
                ? null
                : "its device memory was freed while registered (the provider answers allocation " + now + ", was "
                        + allocationId + ")";
    }

    /** A served read's READ_DATA from this memory was queued. */
    void serveStarted() {
        served++;
    }

    /** A served read's READ_DATA from this memory ended (answered, or its connection lost). */
    void serveEnded() {
        served--;
    }

    /** Whether READ_DATA queued from this memory may still read it. */
    boolean serving() {
        return served > 0;
    }

    /** True if {@code [offset, offset + length)} lies inside this memory; safe against overflow. */
    boolean contains(final long offset, final long length) {
        return offset >= 0 && length >= 0 && offset <= size() && length <= size() - offset;
    }

    /**
     * A view whose position is {@code from} and whose limit is {@code to}, or the end of the view holding
     * {@code from} if that comes first. Host memory only; requires {@code from < to <= size()}.
     */
    ByteBuffer window(final long from, final long to) {
        final int index = (int) (from >>> VIEW_SHIFT);
        final long viewStart = (long) index << VIEW_SHIFT;
        final ByteBuffer view = views[index];
        view.limit((int) Math.min(to - viewStart, view.capacity()));
        view.position((int) (from - viewStart));
        return view;
    }

    /** Copies bytes that arrived in a read buffer into place; host memory only. */
    void copyIn(final MemorySegment source, final long sourceOffset, final long at, final long length) {
        MemorySegment.copy(source, sourceOffset, segment, at, length);
    }
}
