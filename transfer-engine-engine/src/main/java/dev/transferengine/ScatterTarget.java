package dev.transferengine;

/**
 * One destination of a scatter: {@code length} bytes from {@code src + srcOffset} to {@code dst + dstOffset}.
 *
 * @param dst       the receiver's region, from its {@link MemoryRegion#descriptor()}
 * @param length    bytes to write to this target
 * @param srcOffset byte offset into the scatter's source region
 * @param dstOffset byte offset into {@code dst}
 */
public record ScatterTarget(RegionDescriptor dst, long length, long srcOffset, long dstOffset) {

    /**
     * Checks the length and offsets; whether they fit the regions is checked at submission.
     *
     * @throws IllegalArgumentException if the length or an offset is negative
     */
    public ScatterTarget {
        if (length < 0 || srcOffset < 0 || dstOffset < 0) {
            throw new IllegalArgumentException("length and offsets must be >= 0");
        }
    }
}
