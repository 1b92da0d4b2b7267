package dev.transferengine;

/**
 * One source of a {@link ScatterRead}: {@code length} bytes from the peer's {@code src + srcOffset} into our
 * {@code dst + dstOffset}.
 *
 * @param src       the peer's region, from its {@link MemoryRegion#descriptor()}; it must allow reads
 * @param length    bytes to read from this source
 * @param srcOffset byte offset into {@code src}
 * @param dstOffset byte offset into the scatter read's destination region
 */
public record ReadSource(RegionDescriptor src, long length, long srcOffset, long dstOffset) {

    /**
     * Checks the length and offsets; whether they fit the regions is checked at submission.
     *
     * @throws IllegalArgumentException if the length or an offset is negative
     */
    public ReadSource {
        if (length < 0 || srcOffset < 0 || dstOffset < 0) {
            throw new IllegalArgumentException("length and offsets must be >= 0");
        }
    }
}
