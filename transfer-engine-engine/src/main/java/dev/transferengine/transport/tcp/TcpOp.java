package dev.transferengine.transport.tcp;

import dev.transferengine.spi.PageBatch;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.MemorySegment;

import org.jspecify.annotations.Nullable;

/**
 * One posted write or send, from post until its ACK, NACK or failure. Pooled by the domain, so posting
 * allocates nothing once the pool is warm. Worker thread only.
 */
final class TcpOp {

    private static final long[] NO_PAGES = new long[0];

    /**
     * WRITE, WRITE_IMM, IMM, SEND, ABANDON, READ, READ_DATA or READ_FAILED ({@link TcpFrame} types); PAGES or
     * PAGES_IMM for the pages of a paged write that leave as one frame ({@link #pages} of them).
     */
    byte type;
    /** The frame's {@code aux}: a READ_FAILED's reason code, else 0 (a PAGES frame's count comes from its pages). */
    int aux;

    long token;
    /**
     * The connection's request id, carried in the frame's token field and echoed by the ACK or NACK; the pages of a
     * PAGES op take the ids {@code id} to {@code id + pages - 1}.
     */
    long id;
    /** The requests this op stands for: 1, or a PAGES op's pages. */
    int pages = 1;

    MemorySegment source = MemorySegment.NULL;
    long sourceOffset;
    /** Payload bytes; of a PAGES op, its pages' bytes together. */
    long length;
    /** A PAGES op's bytes per page. */
    long pageLength;
    /** A PAGES op's pages: where each starts in {@link #source}, and where it goes in the region; grown, never shrunk. */
    long[] pageSources = NO_PAGES;

    long[] pageTargets = NO_PAGES;
    long rkey;
    long remoteOffset;
    int imm;
    /** For a piece of a staged device write: the staging chunk it is sent from. */
    @Nullable TcpChunk chunk;
    /** For a served read's READ_DATA from host memory: that memory, told when the op ends. */
    @Nullable TcpMemory served;

    boolean isSend() {
        return type == TcpFrame.SEND;
    }

    /** Takes a write's fields whole; {@code type} is its frame type (WRITE, WRITE_IMM or IMM). */
    TcpOp write(final byte type, final WriteDescriptor write) {
        return set(type, write.token(), write.src(), write.srcOffset(), write.length())
                .target(write.rkey(), write.remoteOffset(), write.imm());
    }

    /**
     * The start of a PAGES ({@code type} PAGES or PAGES_IMM) op of {@code batch}'s pages, up to {@code room} of them;
     * {@link #addPage} adds them. Allocates only the first time an op carries this many pages.
     */
    TcpOp pages(final byte type, final PageBatch batch, final int room) {
        set(type, batch.token(), batch.src(), 0, 0).target(batch.rkey(), 0, batch.imm());
        pages = 0;
        pageLength = batch.pageLength();
        if (pageSources.length < room) {
            pageSources = new long[room];
            pageTargets = new long[room];
        }
        return this;
    }

    /** Adds a page of a PAGES op, from {@code sourceAt} of the source to {@code targetAt} of the region. */
    void addPage(final long sourceAt, final long targetAt) {
        pageSources[pages] = sourceAt;
        pageTargets[pages] = targetAt;
        if (pages == 0) {
            remoteOffset = targetAt; // a refusal names the first page
        }
        pages++;
        length += pageLength;
    }

    /** Page {@code i} of the PAGES op {@code batch} as a write of its own, request id {@code batch.id + i}. */
    TcpOp page(final TcpOp batch, final int i) {
        final byte write = batch.type == TcpFrame.PAGES
                ? TcpFrame.WRITE
                : batch.pageLength == 0 ? TcpFrame.IMM : TcpFrame.WRITE_IMM;
        set(write, batch.token, batch.source, batch.pageSources[i], batch.pageLength)
                .target(batch.rkey, batch.pageTargets[i], batch.imm);
        id = batch.id + i;
        return this;
    }

    /** True for the pages of a paged write that leave as one PAGES or PAGES_IMM frame. */
    boolean isPages() {
        return type == TcpFrame.PAGES || type == TcpFrame.PAGES_IMM;
    }

    /**
     * A READ request for {@code read}'s bytes, waiting under read id {@code readId} (carried as the imm); the frame
     * carries no payload, its length is the length asked for.
     */
    TcpOp read(final WriteDescriptor read, final int readId) {
        return set(TcpFrame.READ, read.token(), MemorySegment.NULL, 0, read.length())
                .target(read.rkey(), read.remoteOffset(), readId);
    }

    /** Bytes of payload that follow the frame's header: none for a READ, which only names a length. */
    long payload() {
        return type == TcpFrame.READ ? 0 : length;
    }

    /** A two-sided send of the whole {@code message}. */
    TcpOp send(final long token, final MemorySegment message) {
        return set(TcpFrame.SEND, token, message, 0, message.byteSize()).target(0, 0, 0);
    }

    /** A negative acknowledgement: ABANDON carrying {@code imm}, the missing count in {@code rkey}, the cause. */
    TcpOp abandon(final long token, final int imm, final int missing, final MemorySegment cause) {
        return set(TcpFrame.ABANDON, token, cause, 0, cause.byteSize()).target(missing, 0, imm);
    }

    /**
     * A READ_FAILED ending the served read {@code readId} part-way, for {@code why}, after {@code sent} of its bytes
     * left (carried as the offset); no payload.
     */
    TcpOp readFailed(final long token, final int readId, final TcpReadFailure why, final long sent) {
        set(TcpFrame.READ_FAILED, token, MemorySegment.NULL, 0, 0).target(0, sent, readId);
        aux = why.code();
        return this;
    }

    /** One piece of a staged device write: {@code bytes} of the staging chunk {@code from}, at {@code issued}. */
    TcpOp piece(
            final byte type,
            final WriteDescriptor write,
            final MemorySegment from,
            final long issued,
            final long bytes) {
        return set(type, write.token(), from, 0, bytes)
                .target(write.rkey(), write.remoteOffset() + issued, write.imm());
    }

    private TcpOp set(
            final byte type, final long token, final MemorySegment source, final long sourceOffset, final long length) {
        this.type = type;
        this.token = token;
        this.source = source;
        this.sourceOffset = sourceOffset;
        this.length = length;
        return this;
    }

    private TcpOp target(final long rkey, final long remoteOffset, final int imm) {
        this.rkey = rkey;
        this.remoteOffset = remoteOffset;
        this.imm = imm;
        return this;
    }

    /** Drops the reference to the caller's memory before the op goes back to the pool. */
    void clear() {
        pages = 1;
        aux = 0;
        source = MemorySegment.NULL;
        chunk = null;
        served = null;
    }
}
