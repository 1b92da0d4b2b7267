package dev.transferengine.bench;

import dev.transferengine.MemoryRegion;
import dev.transferengine.PagedRead;
import dev.transferengine.PagedWrite;
import dev.transferengine.ReadRequest;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.Routing;
import dev.transferengine.SingleRead;
import dev.transferengine.SingleWrite;
import dev.transferengine.WriteRequest;

import java.util.OptionalInt;
import java.util.Random;

/**
 * Builds the requests a run cycles through, once, before the clock starts. Consecutive requests use consecutive
 * slots of the regions, so a window of writes touches distinct memory as real transfers do.
 */
final class Requests {

    /** Enough distinct requests to cycle through; more would only cost memory. */
    private static final int MAX_SLOTS = 4096;

    private Requests() {}

    /**
     * Single writes of {@code size} bytes. {@code pinned} sends each request whole over one NIC, rotating over the
     * {@code nics}; otherwise each request is sharded over all of them.
     */
    static WriteRequest[] single(
            final MemoryRegion src, final RegionDescriptor dst, final long size, final int nics, final boolean pinned) {
        final int slots = slots(src, dst, size);
        final int count = pinned ? slots * nics : slots;
        final WriteRequest[] requests = new WriteRequest[count];
        for (int k = 0; k < count; k++) {
            final long offset = (k % slots) * size;
            final Routing routing = pinned ? Routing.pinned(k % nics) : Routing.sharded(nics);
            requests[k] = new SingleWrite(src, offset, size, dst, offset, routing, OptionalInt.of(Imms.DATA));
        }
        return requests;
    }

    /**
     * Paged writes of {@code pages} pages of {@code pageSize} bytes each: contiguous pages at the source, scattered
     * over the destination region by a fixed shuffle, as KV-cache pages are.
     */
    static WriteRequest[] paged(
            final MemoryRegion src, final RegionDescriptor dst, final long pageSize, final int pages) {
        final int slots = slots(src, dst, pageSize * pages);
        final int[] dstOrder = shuffled(slots * pages);
        final WriteRequest[] requests = new WriteRequest[slots];
        for (int s = 0; s < slots; s++) {
            final int[] srcPages = new int[pages];
            final int[] dstPages = new int[pages];
            for (int k = 0; k < pages; k++) {
                srcPages[k] = s * pages + k;
                dstPages[k] = dstOrder[s * pages + k];
            }
            requests[s] = new PagedWrite(
                    src, 0, pageSize, srcPages, dst, 0, pageSize, dstPages, pageSize, OptionalInt.of(Imms.DATA));
        }
        return requests;
    }

    /**
     * Single reads of {@code size} bytes from the peer's region into ours, in the slots and routing of
     * {@link #single}; a read carries no imm.
     */
    static ReadRequest[] singleRead(
            final MemoryRegion dst, final RegionDescriptor src, final long size, final int nics, final boolean pinned) {
        final int slots = slots(dst, src, size);
        final int count = pinned ? slots * nics : slots;
        final ReadRequest[] requests = new ReadRequest[count];
        for (int k = 0; k < count; k++) {
            final long offset = (k % slots) * size;
            final Routing routing = pinned ? Routing.pinned(k % nics) : Routing.sharded(nics);
            requests[k] = new SingleRead(src, offset, size, dst, offset, routing);
        }
        return requests;
    }

    /**
     * Paged reads of {@code pages} pages of {@code pageSize} bytes each: pages scattered over the peer's region by the
     * shuffle of {@link #paged}, read into contiguous local pages, as a decode node pulls KV-cache pages.
     */
    static ReadRequest[] pagedRead(
            final MemoryRegion dst, final RegionDescriptor src, final long pageSize, final int pages) {
        final int slots = slots(dst, src, pageSize * pages);
        final int[] srcOrder = shuffled(slots * pages);
        final ReadRequest[] requests = new ReadRequest[slots];
        for (int s = 0; s < slots; s++) {
            final int[] srcPages = new int[pages];
            final int[] dstPages = new int[pages];
            for (int k = 0; k < pages; k++) {
                srcPages[k] = srcOrder[s * pages + k];
                dstPages[k] = s * pages + k;
            }
            requests[s] = new PagedRead(src, 0, pageSize, srcPages, dst, 0, pageSize, dstPages, pageSize);
        }
        return requests;
    }

    private static int slots(final MemoryRegion src, final RegionDescriptor dst, final long bytes) {
        final long fit = Math.min(src.length(), dst.length()) / bytes;
        if (fit < 1) {
            throw new IllegalArgumentException("a request of " + bytes + " bytes does not fit the regions (local "
                    + src.length() + " bytes, peer " + dst.length() + " bytes); raise --region (the peer's too)");
        }
        return (int) Math.min(fit, MAX_SLOTS);
    }

    private static int[] shuffled(final int n) {
        final int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        // fixed seed: every run writes the same pattern
        final Random random = new Random(42);
        for (int i = n - 1; i > 0; i--) {
            final int j = random.nextInt(i + 1);
            final int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }
}
