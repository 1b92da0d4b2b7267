package dev.transferengine;

import java.util.OptionalInt;

/**
 * Page {@code k} goes from {@code src + srcOffset + srcStride * srcPages[k]} to
 * {@code dst + dstOffset + dstStride * dstPages[k]}, {@code pageLength} bytes each, one write per page. The page list
 * is cut into at most N contiguous ranges, one per NIC. The arrays are copied once, at construction.
 */
@SuppressWarnings("ArrayRecordComponent") // int[] page lists: no boxing; a request is never compared or hashed
public record PagedWrite(
        MemoryRegion src,
        long srcOffset,
        long srcStride,
        int[] srcPages,
        MrDesc dst,
        long dstOffset,
        long dstStride,
        int[] dstPages,
        long pageLength,
        OptionalInt imm)
        implements WriteRequest {

    public PagedWrite {
        if (srcPages.length != dstPages.length) {
            throw new IllegalArgumentException(
                    "srcPages has " + srcPages.length + " entries but dstPages has " + dstPages.length);
        }
        if (srcOffset < 0 || srcStride < 0 || dstOffset < 0 || dstStride < 0 || pageLength < 0) {
            throw new IllegalArgumentException("offsets, strides and pageLength must be >= 0");
        }
        srcPages = srcPages.clone();
        dstPages = dstPages.clone();
        for (int k = 0; k < srcPages.length; k++) {
            if (srcPages[k] < 0 || dstPages[k] < 0) {
                throw new IllegalArgumentException(
                        "page index " + k + " is negative: src=" + srcPages[k] + " dst=" + dstPages[k]);
            }
        }
    }

    /** Same pages at the same indices on both sides, contiguous ({@code stride == pageLength}), no offsets. */
    public static PagedWrite of(final MemoryRegion src, final MrDesc dst, final long pageLength, final int[] pages) {
        return new PagedWrite(src, 0, pageLength, pages, dst, 0, pageLength, pages, pageLength, OptionalInt.empty());
    }

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

    public int pageCount() {
        return srcPages.length;
    }

    /** Index of source page {@code k} (no copy). */
    public int srcPage(final int k) {
        return srcPages[k];
    }

    /** Index of destination page {@code k} (no copy). */
    public int dstPage(final int k) {
        return dstPages[k];
    }

    @Override
    public int[] srcPages() {
        return srcPages.clone();
    }

    @Override
    public int[] dstPages() {
        return dstPages.clone();
    }
}
