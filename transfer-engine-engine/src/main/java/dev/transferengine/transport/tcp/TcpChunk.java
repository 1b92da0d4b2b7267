package dev.transferengine.transport.tcp;

import dev.transferengine.spi.DeviceCopyStream;
import dev.transferengine.spi.StagingBuffer;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import org.jspecify.annotations.Nullable;

/**
 * One pinned staging chunk of a domain's pool, and what it is busy with: the device copy that fills or drains it
 * and, on the sending side, the write piece it carries. Worker thread only.
 */
final class TcpChunk {

    final StagingBuffer buffer;
    final MemorySegment segment;
    /** Made once, so a socket read into the chunk allocates nothing. */
    final ByteBuffer view;

    @Nullable DeviceCopyStream stream;

    long ticket;
    /** Sending side: the write this chunk carries a piece of, and the op that sends it. */
    TcpStaging.@Nullable StagedWrite owner;

    @Nullable TcpOp op;
    /** Receiving side: the device memory the chunk is being copied into. */
    @Nullable TcpMemory memory;

    TcpChunk(final StagingBuffer buffer) {
        this.buffer = buffer;
        this.segment = buffer.segment();
        this.view = segment.asByteBuffer();
    }

    /** True once the device copy enqueued for this chunk finished. Never blocks. */
    boolean copied() {
        return stream == null || stream.isDone(ticket);
    }

    void copying(final DeviceCopyStream copyStream, final long copyTicket) {
        if (copyTicket == DeviceCopyStream.BUSY) {
            // Each direction has at most as many chunks as a stream takes copies, so this is a bug, not load.
            throw new IllegalStateException("device copy stream full with " + copyStream.capacity() + " copies");
        }
        stream = copyStream;
        ticket = copyTicket;
    }

    void idle() {
        stream = null;
        owner = null;
        op = null;
        memory = null;
    }
}
