package dev.transferengine.transport.tcp;

import java.lang.foreign.MemorySegment;

import org.jspecify.annotations.Nullable;

/**
 * One posted write or send, from post until its ACK, NACK or failure. Pooled by the domain, so posting
 * allocates nothing once the pool is warm. Worker thread only.
 */
final class TcpOp {

    /** WRITE, WRITE_IMM, IMM or SEND ({@link TcpFrame} types). */
    byte type;

    long token;
    /** The connection's request id, carried in the frame's token field and echoed by the ACK or NACK. */
    long id;

    MemorySegment source = MemorySegment.NULL;
    long sourceOffset;
    long length;
    long rkey;
    long remoteOffset;
    int imm;
    /** For a piece of a staged device write: the staging chunk it is sent from. */
    @Nullable TcpChunk chunk;

    boolean isSend() {
        return type == TcpFrame.SEND;
    }

    TcpOp set(
            final byte type,
            final long token,
            final MemorySegment source,
            final long sourceOffset,
            final long length,
            final long rkey,
            final long remoteOffset,
            final int imm) {
        this.type = type;
        this.token = token;
        this.source = source;
        this.sourceOffset = sourceOffset;
        this.length = length;
        this.rkey = rkey;
        this.remoteOffset = remoteOffset;
        this.imm = imm;
        return this;
    }

    /** Drops the reference to the caller's memory before the op goes back to the pool. */
    void clear() {
        source = MemorySegment.NULL;
        chunk = null;
    }
}
