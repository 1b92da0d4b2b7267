package dev.transferengine.cuda;

import java.lang.foreign.MemorySegment;

/** Makes segments that only carry an address and a size (device pointers, driver-allocated host memory). */
final class DeviceSegments {

    private DeviceSegments() {}

    @SuppressWarnings("restricted")
    static MemorySegment of(final long address, final long byteSize) {
        return MemorySegment.ofAddress(address).reinterpret(byteSize);
    }
}
