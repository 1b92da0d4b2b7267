package dev.transferengine.cuda;

/** Where watcher pages come from: pinned device-mapped host memory on a GPU, plain host memory in tests. */
interface SlotPageSource {

    /** A zeroed page of {@link SlotPage#BYTES}. Blocks for the allocation. */
    SlotPage allocate();

    /**
     * Blocks until no kernel that might still store into a page runs any more; pages are freed only after it returned.
     * Host pages need no wait.
     */
    default void awaitDeviceIdle() {}

    /**
     * Pages from {@code cuMemHostAlloc(PORTABLE | DEVICEMAP)} on {@code device}; the device is idle once every launch
     * in its primary context ended ({@code cuCtxSynchronize}): a kernel that stores into a freed page faults the GPU,
     * which breaks the context for every user of the process.
     */
    static SlotPageSource cuda(final CudaDevice device) {
        return new SlotPageSource() {
            @Override
            public SlotPage allocate() {
                final PinnedBuffer buffer = device.allocatePinned(SlotPage.BYTES);
                buffer.segment().fill((byte) 0);
                return new SlotPage(buffer.segment(), buffer.devicePointer(), buffer);
            }

            @Override
            public void awaitDeviceIdle() {
                device.synchronize();
            }
        };
    }
}
