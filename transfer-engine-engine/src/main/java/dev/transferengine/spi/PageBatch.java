package dev.transferengine.spi;

import java.lang.foreign.MemorySegment;

/**
 * A run of pages of one paged write as the engine hands it to {@link Domain#writePages}: {@link #count()} pages of
 * {@link #pageLength()} bytes each, page {@code i} from {@link #src()} at {@link #srcOffset(int) srcOffset(i)}
 * (registered on that domain as {@link #srcKey()}) to region {@link #rkey()} of peer {@link #peer()} at
 * {@link #remoteBase()} + {@link #remoteOffset(int) remoteOffset(i)}. Every page is a write of its own to the
 * receiver, carrying the batch's imm if it has one: k pages, k imm events, each page checked on its own.
 *
 * <pre>
 *   token, src, srcKey, pageLength, peer, remoteBase, rkey, imm     shared by the batch's pages
 *   srcOffsets[0 .. count)      remoteOffsets[0 .. count)           one entry per page, in page order
 * </pre>
 *
 * <p>Each group's worker fills one instance ({@link #clear()}, the shared fields, then {@link #add} per page) and
 * reuses it for every batch, so posting allocates nothing: a domain reads it during the call and copies what it
 * keeps. Worker thread only.
 */
public final class PageBatch {

    private final long[] srcOffsets;
    private final long[] remoteOffsets;
    /** What {@link #page} fills: the batch's pages as single writes, for a domain that posts them one at a time. */
    private final WriteDescriptor page = new WriteDescriptor();

    private int count;
    private long token;
    private MemorySegment src = MemorySegment.NULL;
    private long srcKey;
    private long pageLength;
    private long peer;
    private long remoteBase;
    private long rkey;
    private boolean hasImm;
    private int imm;

    /**
     * An empty batch of room for {@code capacity} pages, to be filled; the engine makes one per worker. Allocates.
     *
     * @param capacity the most pages one batch holds, at least 1
     * @throws IllegalArgumentException if {@code capacity} is below 1
     */
    public PageBatch(final int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("a page batch holds at least 1 page, not " + capacity);
        }
        srcOffsets = new long[capacity];
        remoteOffsets = new long[capacity];
    }

    /**
     * Starts a batch for the engine's {@code token}, which the domain hands back untouched in its reports, one report
     * per page (or one per run of pages, through {@link DomainListener#onComplete(long, long, int)} and
     * {@link DomainListener#onFailed(long, dev.transferengine.exceptions.TransferEngineException, int)}).
     *
     * @param value the engine's token for this batch's pages; opaque to the domain
     * @return this batch
     */
    public PageBatch token(final long value) {
        token = value;
        return this;
    }

    /**
     * The source every page is read from, and the pages' length.
     *
     * @param segment the registered source memory
     * @param key the key {@link Domain#register} returned for the segment on this domain
     * @param bytes bytes per page, 0 or more (0: imm-only pages)
     * @return this batch
     */
    public PageBatch source(final MemorySegment segment, final long key, final long bytes) {
        src = segment;
        srcKey = key;
        pageLength = bytes;
        return this;
    }

    /**
     * The region every page goes to: region {@code key} of {@code peerHandle} (from {@link Domain#resolve}), whose
     * descriptor states base address {@code base}.
     *
     * @param peerHandle this domain's handle for the peer NIC
     * @param base the remote region's base address, from its descriptor
     * @param key the remote region's key on the peer NIC
     * @return this batch
     */
    public PageBatch target(final long peerHandle, final long base, final long key) {
        peer = peerHandle;
        remoteBase = base;
        rkey = key;
        return this;
    }

    /**
     * The imm each page's write tells the target of once the page is in place, or none.
     *
     * @param present whether the pages carry an imm
     * @param value the 32-bit imm; ignored (stored as 0) when {@code present} is false
     * @return this batch
     */
    public PageBatch imm(final boolean present, final int value) {
        hasImm = present;
        imm = present ? value : 0;
        return this;
    }

    /**
     * Adds a page; needs room ({@link #isFull()} false).
     *
     * @param srcOffset byte offset of the page in {@link #src()}
     * @param remoteOffset byte offset of the page in the remote region
     * @throws IndexOutOfBoundsException if the batch is full
     */
    public void add(final long srcOffset, final long remoteOffset) {
        srcOffsets[count] = srcOffset;
        remoteOffsets[count] = remoteOffset;
        count++;
    }

    /**
     * Whether the batch holds as many pages as it has room for.
     *
     * @return true once {@link #count()} equals {@link #capacity()}
     */
    public boolean isFull() {
        return count == srcOffsets.length;
    }

    /**
     * The most pages one batch holds.
     *
     * @return the capacity given at construction
     */
    public int capacity() {
        return srcOffsets.length;
    }

    /**
     * How many pages the batch holds.
     *
     * @return the count of pages added since {@link #clear()}
     */
    public int count() {
        return count;
    }

    /**
     * The engine's token, to hand back in every page's report.
     *
     * @return the token set by {@link #token(long)}
     */
    public long token() {
        return token;
    }

    /**
     * The source memory of every page.
     *
     * @return the segment set by {@link #source}, or {@link MemorySegment#NULL} after {@link #clear()}
     */
    public MemorySegment src() {
        return src;
    }

    /**
     * The source's key on this domain.
     *
     * @return the key {@link Domain#register} returned for the source segment
     */
    public long srcKey() {
        return srcKey;
    }

    /**
     * How many bytes each page writes.
     *
     * @return bytes per page, 0 for imm-only pages
     */
    public long pageLength() {
        return pageLength;
    }

    /**
     * The peer NIC every page goes to.
     *
     * @return the handle {@link Domain#resolve} returned for it
     */
    public long peer() {
        return peer;
    }

    /**
     * The remote region's base address, as its descriptor states it.
     *
     * @return the base address (a host address or a device pointer on the peer)
     */
    public long remoteBase() {
        return remoteBase;
    }

    /**
     * The remote region's key, which the peer checks for each page before it lets the bytes in.
     *
     * @return the remote key on the peer NIC
     */
    public long rkey() {
        return rkey;
    }

    /**
     * Whether each page carries an imm.
     *
     * @return true if the target is to be told of {@link #imm()} once per page
     */
    public boolean hasImm() {
        return hasImm;
    }

    /**
     * The imm every page delivers.
     *
     * @return the 32-bit imm, or 0 when {@link #hasImm()} is false
     */
    public int imm() {
        return imm;
    }

    /**
     * Where page {@code i} starts in {@link #src()}.
     *
     * @param i the page's position, 0 to {@link #count()} - 1
     * @return the byte offset into the source segment
     * @throws IndexOutOfBoundsException if {@code i} is not below {@link #capacity()}
     */
    public long srcOffset(final int i) {
        return srcOffsets[i];
    }

    /**
     * Where page {@code i} goes in the remote region.
     *
     * @param i the page's position, 0 to {@link #count()} - 1
     * @return the byte offset from {@link #remoteBase()}
     * @throws IndexOutOfBoundsException if {@code i} is not below {@link #capacity()}
     */
    public long remoteOffset(final int i) {
        return remoteOffsets[i];
    }

    /**
     * Page {@code i} as a single write, for a domain that posts the batch's pages one at a time (the default of
     * {@link Domain#writePages}). Returns the batch's own descriptor, refilled on each call: valid until the next.
     *
     * @param i the page's position, 0 to {@link #count()} - 1
     * @return a descriptor holding page {@code i}'s write
     * @throws IndexOutOfBoundsException if {@code i} is not below {@link #capacity()}
     */
    public WriteDescriptor page(final int i) {
        return page.token(token)
                .source(src, srcOffsets[i], srcKey, pageLength)
                .target(peer, remoteBase, remoteOffsets[i], rkey)
                .imm(hasImm, imm);
    }

    /** Empties the batch and drops the reference to the source memory, once its pages are posted. */
    public void clear() {
        count = 0;
        src = MemorySegment.NULL;
        page.clear();
    }
}
