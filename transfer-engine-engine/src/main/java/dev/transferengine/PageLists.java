package dev.transferengine;

/** The checks {@link PagedWrite} and {@link PagedRead} share on their page lists and numbers. */
final class PageLists {

    private PageLists() {}

    /**
     * @throws IllegalArgumentException if the page lists differ in length, or an offset, stride, length or page index
     *     is negative
     */
    static void check(
            final long srcOffset,
            final long srcStride,
            final int[] srcPages,
            final long dstOffset,
            final long dstStride,
            final int[] dstPages,
            final long pageLength) {
        if (srcPages.length != dstPages.length) {
            throw new IllegalArgumentException(
                    "srcPages has " + srcPages.length + " entries but dstPages has " + dstPages.length);
        }
        if (srcOffset < 0 || srcStride < 0 || dstOffset < 0 || dstStride < 0 || pageLength < 0) {
            throw new IllegalArgumentException("offsets, strides and pageLength must be >= 0");
        }
        for (int k = 0; k < srcPages.length; k++) {
            if (srcPages[k] < 0 || dstPages[k] < 0) {
                throw new IllegalArgumentException(
                        "page index " + k + " is negative: src=" + srcPages[k] + " dst=" + dstPages[k]);
            }
        }
    }
}
