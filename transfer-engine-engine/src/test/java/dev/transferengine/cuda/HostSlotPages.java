package dev.transferengine.cuda;

import dev.transferengine.spi.StagingBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;

/** Watcher pages in plain host memory: the "device pointer" is the host address, and a test plays the GPU. */
final class HostSlotPages implements SlotPageSource {

    final AtomicInteger allocated = new AtomicInteger();
    final AtomicInteger freed = new AtomicInteger();

    @Override
    @SuppressWarnings("MustBeClosedChecker") // the page owns the arena and closes it when freed
    public SlotPage allocate() {
        final Arena arena = Arena.ofShared();
        final MemorySegment page = arena.allocate(SlotPage.BYTES, SlotPage.BYTES);
        allocated.incrementAndGet();
        return new SlotPage(page, page.address(), new StagingBuffer() {
            @Override
            public MemorySegment segment() {
                return page;
            }

            @Override
            public void close() {
                freed.incrementAndGet();
                arena.close();
            }
        });
    }

    /** Stores {@code value} into the slot as a kernel would (a release store). */
    @SuppressWarnings("restricted")
    static void gpuStore(final long devicePointer, final long value) {
        final MemorySegment slot = MemorySegment.ofAddress(devicePointer).reinterpret(Long.BYTES);
        ValueLayout.JAVA_LONG.varHandle().setRelease(slot, 0L, value);
    }
}
