package dev.transferengine.spi;

import java.lang.foreign.MemorySegment;

/**
 * One write as the engine hands it to {@link Domain#write}: {@link #length()} bytes from {@link #src()} at
 * {@link #srcOffset()} (registered on that domain as {@link #srcKey()}) to region {@link #rkey()} of peer
 * {@link #peer()} at {@link #remoteBase()} + {@link #remoteOffset()}, with an optional imm. The length may be 0 (an
 * imm-only write).
 *
 * <p>A read ({@link Domain#read}) uses the same fields with the bytes flowing the other way: the remote region is
 * the source, and {@link #src()} is the local memory the bytes land in (its "source" fields name the local side of
 * the operation). A read carries no imm.
 *
 * <p>Each group's worker fills one instance and reuses it for every post, so posting allocates nothing: a domain
 * reads it during the call and copies what it keeps. Worker thread only.
 */
public final class WriteDescriptor {

    private long token;
    private MemorySegment src = MemorySegment.NULL;
    private long srcOffset;
    private long srcKey;
    private long length;
    private long peer;
    private long remoteBase;
    private long remoteOffset;
    private long rkey;
    private boolean hasImm;
    private int imm;

    /** An empty write, to be filled; the engine makes one per worker. */
    public WriteDescriptor() {}

    /**
     * Starts a write for the engine's {@code token}, which the domain hands back untouched in its reports.
     *
     * @param value the engine's token for this piece of an operation; opaque to the domain
     * @return this descriptor
     */
    public WriteDescriptor token(final long value) {
        token = value;
        return this;
    }

    /**
     * The source: {@code bytes} bytes of {@code segment} from {@code offset}, registered here as {@code key}.
     *
     * @param segment the registered source memory, or {@link MemorySegment#NULL} for an imm-only write
     * @param offset byte offset into {@code segment}
     * @param key the key {@link Domain#register} returned for the segment on this domain
     * @param bytes bytes to write, 0 or more
     * @return this descriptor
     */
    public WriteDescriptor source(final MemorySegment segment, final long offset, final long key, final long bytes) {
        src = segment;
        srcOffset = offset;
        srcKey = key;
        length = bytes;
        return this;
    }

    /**
     * The target: region {@code key} of {@code peerHandle} (from {@link Domain#resolve}) at {@code base + offset}.
     *
     * @param peerHandle this domain's handle for the peer NIC
     * @param base the remote region's base address, from its descriptor
     * @param offset byte offset into the remote region
     * @param key the remote region's key on the peer NIC
     * @return this descriptor
     */
    public WriteDescriptor target(final long peerHandle, final long base, final long offset, final long key) {
        peer = peerHandle;
        remoteBase = base;
        remoteOffset = offset;
        rkey = key;
        return this;
    }

    /**
     * The imm the target is told of once the bytes are in place, or none.
     *
     * @param present whether the write carries an imm
     * @param value the 32-bit imm; ignored (stored as 0) when {@code present} is false
     * @return this descriptor
     */
    public WriteDescriptor imm(final boolean present, final int value) {
        hasImm = present;
        imm = present ? value : 0;
        return this;
    }

    /**
     * A copy, for a decorator that keeps a write past the call. Allocates.
     *
     * @return a new descriptor with the same fields, the same source segment included
     */
    public WriteDescriptor copy() {
        return new WriteDescriptor()
                .token(token)
                .source(src, srcOffset, srcKey, length)
                .target(peer, remoteBase, remoteOffset, rkey)
                .imm(hasImm, imm);
    }

    /**
     * The engine's token, to hand back in {@link DomainListener#onComplete} or
     * {@link DomainListener#onFailed}.
     *
     * @return the token set by {@link #token(long)}
     */
    public long token() {
        return token;
    }

    /**
     * The source memory; {@link MemorySegment#NULL} for an imm-only write.
     *
     * @return the segment set by {@link #source}, or {@link MemorySegment#NULL} after {@link #clear()}
     */
    public MemorySegment src() {
        return src;
    }

    /**
     * Where in {@link #src()} the bytes start.
     *
     * @return the byte offset into the source segment
     */
    public long srcOffset() {
        return srcOffset;
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
     * How much to write.
     *
     * @return the number of bytes, 0 for an imm-only write
     */
    public long length() {
        return length;
    }

    /**
     * The peer NIC to write to.
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
     * Where in the remote region the bytes go.
     *
     * @return the byte offset from {@link #remoteBase()}
     */
    public long remoteOffset() {
        return remoteOffset;
    }

    /**
     * The remote region's key, which the peer checks before it lets the bytes in.
     *
     * @return the remote key on the peer NIC
     */
    public long rkey() {
        return rkey;
    }

    /**
     * Whether the write carries an imm.
     *
     * @return true if the target is to be told of {@link #imm()}
     */
    public boolean hasImm() {
        return hasImm;
    }

    /**
     * The imm to deliver.
     *
     * @return the 32-bit imm, or 0 when {@link #hasImm()} is false
     */
    public int imm() {
        return imm;
    }

    /** Drops the reference to the source memory once the write is posted. */
    public void clear() {
        src = MemorySegment.NULL;
    }
}
