package dev.transferengine.cuda;

import jcuda.driver.CUdeviceptr;

/** A JCuda device pointer whose address can be read back; {@link #at(long)} makes one from a plain address. */
final class RawDevicePointer extends CUdeviceptr {

    private static final CUdeviceptr NULL = new CUdeviceptr();

    long address() {
        return getNativePointer() + getByteOffset();
    }

    /** JCuda passes {@code nativePointer + byteOffset} to the driver, so an offset from NULL is the address itself. */
    static CUdeviceptr at(final long address) {
        return NULL.withByteOffset(address);
    }
}
