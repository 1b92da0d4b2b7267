package dev.transferengine.cuda;

/** Where watcher pages come from: pinned device-mapped host memory on a GPU, plain host memory in tests. */
@FunctionalInterface
interface SlotPageSource {

    /** A zeroed page of {@link SlotPage#BYTES}. Blocks for the allocation. */
    SlotPage allocate();

    /** Pages from {@code cuMemHostAlloc(PORTABLE | DEVICEMAP)} on {@code device}. */
    static SlotPageSource cuda(final CudaDevice device) {
        return () -> {
            final PinnedBuffer buffer = device.allocatePinned(SlotPage.BYTES);
            buffer.segment().fill((byte) 0);
            return new SlotPage(buffer.segment(), buffer.devicePointer(), buffer);
        };
    }
}
