package dev.transferengine.spi;

import java.lang.foreign.MemorySegment;

/**
 * One write as the engine hands it to {@link Domain#write}: {@link #length()} bytes from {@link #src()} at
 * {@link #srcOffset()} (registered on that domain as {@link #srcKey()}) to region {@link #rkey()} of peer
 * {@link #peer()} at {@link #remoteBase()} + {@link #remoteOffset()}, with an optional imm. The length may be 0 (an
 * imm-only write).
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

    /** Starts a write for the engine's {@code token}, which the domain hands back untouched in its reports. */
    public WriteDescriptor token(final long value) {
        token = value;
        return this;
    }

    /** The source: {@code length} bytes of {@code segment} from {@code offset}, registered here as {@code key}. */
    public WriteDescriptor source(final MemorySegment segment, final long offset, final long key, final long bytes) {
        src = segment;
        srcOffset = offset;
        srcKey = key;
        length = bytes;
        return this;
    }

    /** The target: region {@code key} of {@code peerHandle} (from {@link Domain#resolve}) at {@code base + offset}. */
    public WriteDescriptor target(final long peerHandle, final long base, final long offset, final long key) {
        peer = peerHandle;
        remoteBase = base;
        remoteOffset = offset;
        rkey = key;
        return this;
    }

    /** The imm the target is told of once the bytes are in place, or none. */
    public WriteDescriptor imm(final boolean present, final int value) {
        hasImm = present;
        imm = present ? value : 0;
        return this;
    }

    /** A copy, for a decorator that keeps a write past the call. Allocates. */
    public WriteDescriptor copy() {
        return new WriteDescriptor()
                .token(token)
                .source(src, srcOffset, srcKey, length)
                .target(peer, remoteBase, remoteOffset, rkey)
                .imm(hasImm, imm);
    }

    public long token() {
        return token;
    }

    /** The source memory; {@link MemorySegment#NULL} for an imm-only write. */
    public MemorySegment src() {
        return src;
    }

    public long srcOffset() {
        return srcOffset;
    }

    public long srcKey() {
        return srcKey;
    }

    public long length() {
        return length;
    }

    public long peer() {
        return peer;
    }

    public long remoteBase() {
        return remoteBase;
    }

    public long remoteOffset() {
        return remoteOffset;
    }

    public long rkey() {
        return rkey;
    }

    public boolean hasImm() {
        return hasImm;
    }

    public int imm() {
        return imm;
    }

    /** Drops the reference to the source memory once the write is posted. */
    public void clear() {
        src = MemorySegment.NULL;
    }
}
