package dev.transferengine.cuda;

import jcuda.Pointer;

/** A JCuda host pointer whose address can be read back, and one made from a plain address. */
final class RawPointer extends Pointer {

    RawPointer() {}

    RawPointer(final long address) {
        super(address);
    }

    long address() {
        return getNativePointer() + getByteOffset();
    }
}
