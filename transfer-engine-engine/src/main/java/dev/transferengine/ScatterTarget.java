package dev.transferengine;

/** One destination of a scatter: {@code length} bytes from {@code src + srcOffset} to {@code dst + dstOffset}. */
public record ScatterTarget(MrDesc dst, long length, long srcOffset, long dstOffset) {

    public ScatterTarget {
        if (length < 0 || srcOffset < 0 || dstOffset < 0) {
            throw new IllegalArgumentException("length and offsets must be >= 0");
        }
    }
}
