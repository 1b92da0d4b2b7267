package dev.transferengine;

import java.util.OptionalInt;

/**
 * Page {@code k} goes from {@code src + srcOffset + srcStride * srcPages[k]} to
 * {@code dst + dstOffset + dstStride * dstPages[k]}, {@code pageLength} bytes each, one write per page. The page list
 * is cut into at most N contiguous ranges, one per NIC. The arrays are copied once, at construction.
 *
 * @param src        our registered region the pages are read from
 * @param srcOffset  byte offset of source page 0 in {@code src}
 * @param srcStride  bytes from one source page index to the next
 * @param srcPages   source page indices, one per page written (copied)
 * @param dst        the receiver's region, from its {@link MemoryRegion#descriptor()}
 * @param dstOffset  byte offset of destination page 0 in {@code dst}
 * @param dstStride  bytes from one destination page index to the next
 * @param dstPages   destination page indices, as many as {@code srcPages} (copied)
 * @param pageLength bytes per page
 * @param imm        the imm delivered with each page's write, or empty
 */
@SuppressWarnings("ArrayRecordComponent") // int[] page lists: no boxing; a request is never compared or hashed
public record PagedWrite(
        MemoryRegion src,
        long srcOffset,
        long srcStride,
        int[] srcPages,
        RegionDescriptor dst,
        long dstOffset,
        long dstStride,
        int[] dstPages,
        long pageLength,
        OptionalInt imm)
        implements WriteRequest {

    /**
     * Checks the lists and numbers and copies the page lists; whether the pages fit the regions is checked at
     * submission.
     *
     * @throws IllegalArgumentException if the page lists differ in length, or an offset, stride, length or page index
     *     is negative
     */
    public PagedWrite {
        srcPages = srcPages.clone();
        dstPages = dstPages.clone();
        PageLists.check(srcOffset, srcStride, srcPages, dstOffset, dstStride, dstPages, pageLength);
    }

    /**
     * Same pages at the same indices on both sides, contiguous ({@code stride == pageLength}), no offsets, no imm.
     *
     * @param src our region the pages are read from
     * @param dst the receiver's region
     * @param pageLength bytes per page, also the stride
     * @param pages page indices, used on both sides (copied)
     * @return the request, reusable for any number of submissions
     * @throws IllegalArgumentException if {@code pageLength} or a page index is negative
     */
    public static PagedWrite of(
            final MemoryRegion src, final RegionDescriptor dst, final long pageLength, final int[] pages) {
        return new PagedWrite(src, 0, pageLength, pages, dst, 0, pageLength, pages, pageLength, OptionalInt.empty());
    }

    /**
     * This write, delivering an imm with each page.
     *
     * @param value the 32-bit imm
     * @return a new request (the page lists copied again); this one is unchanged
     */
    public PagedWrite withImm(final int value) {
        return new PagedWrite(
                src,
                srcOffset,
                srcStride,
                srcPages,
                dst,
                dstOffset,
                dstStride,
                dstPages,
                pageLength,
                OptionalInt.of(value));
    }

    /**
     * How many pages the request writes.
     *
     * @return the number of pages, also the number of writes
     */
    public int pageCount() {
        return srcPages.length;
    }

    /**
     * Index of source page {@code k}; does not copy the list.
     *
     * @param k the page's position, 0 to {@link #pageCount()} - 1
     * @return the source page index
     * @throws ArrayIndexOutOfBoundsException if {@code k} is out of range
     */
    public int srcPage(final int k) {
        return srcPages[k];
    }

    /**
     * Index of destination page {@code k}; does not copy the list.
     *
     * @param k the page's position, 0 to {@link #pageCount()} - 1
     * @return the destination page index
     * @throws ArrayIndexOutOfBoundsException if {@code k} is out of range
     */
    public int dstPage(final int k) {
        return dstPages[k];
    }

    /**
     * The source page indices. Allocates a copy on each call; use {@link #srcPage(int)} in a loop.
     *
     * @return a copy of the source page indices
     */
    @Override
    public int[] srcPages() {
        return srcPages.clone();
    }

    /**
     * The destination page indices. Allocates a copy on each call; use {@link #dstPage(int)} in a loop.
     *
     * @return a copy of the destination page indices
     */
    @Override
    public int[] dstPages() {
        return dstPages.clone();
    }
}
