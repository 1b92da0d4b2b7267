package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.EngineConfig;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.DeviceCopyStream;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Objects;

import org.agrona.collections.Int2ObjectHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Device memory on the tcp transport, staged through a per-domain pool of pinned chunks: {@value #CHUNKS_OPTION}
 * chunks (default 4) of {@value #CHUNK_BYTES_OPTION} bytes (default 4 MiB) for each direction, allocated with the
 * first device region and freed once the last one is deregistered and no chunk is busy. Separate pools per
 * direction keep two domains that send to each other from deadlocking: a receive chunk frees itself (its copy to
 * the device finishes), whatever the network does.
 *
 * <p>Sending: a device write leaves as one WRITE frame per chunk-sized piece (the last one carries the imm). The
 * copy of piece k+1 off the device runs while piece k is on the network; a chunk returns to the pool when its
 * piece is acknowledged, and the write completes when every piece is. Receiving ({@link TcpLanding}): a payload
 * for a device region is read into chunks, each copied to the device as soon as it is full, so the network fills
 * one chunk while the previous one is copied; the request is acknowledged once its last copy finished.
 *
 * <p>Copies run on one stream per device and direction and are polled, so the worker never blocks. Worker thread
 * only.
 */
final class TcpStaging {

    /** Engine option: bytes per staging chunk. */
    static final String CHUNK_BYTES_OPTION = "tcp.stagingChunkBytes";
    /** Engine option: staging chunks per direction and domain. */
    static final String CHUNKS_OPTION = "tcp.stagingChunks";

    private static final int DEFAULT_CHUNK_BYTES = 4 << 20;
    private static final int DEFAULT_CHUNKS = 4;

    /** A device write being sent in pieces. */
    static final class StagedWrite {
        final TcpPeer peer;
        final byte type;
        /** The write, copied: the engine reuses its descriptor. */
        final WriteDescriptor write;
        /** The device memory the pieces are copied from, checked before each copy. */
        final TcpMemory source;

        final int device;
        final long deviceAddress;
        final long token;
        final long length;
        long issued;
        /** Bytes of its pieces posted to the peer, in order: what a served read stopped part-way sent of it. */
        long posted;

        int outstanding;
        boolean failed;

        StagedWrite(final TcpPeer peer, final byte type, final TcpMemory source, final WriteDescriptor write) {
            this.peer = peer;
            this.type = type;
            this.write = write.copy();
            this.source = source;
            this.device = source.device();
            this.deviceAddress = source.segment().address() + write.srcOffset();
            this.token = write.token();
            this.length = write.length();
        }
    }

    private final String provider;
    private final int chunkBytes;
    private final int chunks;
    private final Int2ObjectHashMap<DeviceCopyStream> toHost = new Int2ObjectHashMap<>();
    private final Int2ObjectHashMap<DeviceCopyStream> toDevice = new Int2ObjectHashMap<>();
    private final ArrayList<TcpChunk> all = new ArrayList<>();
    private final ArrayDeque<TcpChunk> freeOut = new ArrayDeque<>();
    private final ArrayDeque<TcpChunk> freeIn = new ArrayDeque<>();
    private final ArrayList<TcpChunk> copyingIn = new ArrayList<>();
    private final ArrayDeque<TcpChunk> copyingOut = new ArrayDeque<>();
    private final ArrayDeque<StagedWrite> writes = new ArrayDeque<>();
    private int deviceRegions;

    /** Reads the options; {@link #optionProblem} must have accepted them. */
    TcpStaging(final EngineConfig config) {
        this.provider = config.option(DeviceMemory.OPTION, DeviceMemory.DEFAULT);
        this.chunkBytes = Integer.parseInt(
                config.option(CHUNK_BYTES_OPTION, "" + DEFAULT_CHUNK_BYTES).strip());
        this.chunks = Integer.parseInt(
                config.option(CHUNKS_OPTION, "" + DEFAULT_CHUNKS).strip());
    }

    /** Null if the staging options are valid; otherwise what is wrong with them. */
    static @Nullable String optionProblem(final EngineConfig config) {
        final String bytes = config.option(CHUNK_BYTES_OPTION, "" + DEFAULT_CHUNK_BYTES);
        final String count = config.option(CHUNKS_OPTION, "" + DEFAULT_CHUNKS);
        try {
            if (Integer.parseInt(bytes.strip()) < 4096) {
                return CHUNK_BYTES_OPTION + " must be >= 4096: " + bytes;
            }
            // Two chunks per direction at least, or copy and network could not overlap.
            return Integer.parseInt(count.strip()) >= 2 ? null : CHUNKS_OPTION + " must be >= 2: " + count;
        } catch (final NumberFormatException e) {
            return "staging options must be whole numbers: " + CHUNK_BYTES_OPTION + "='" + bytes + "', " + CHUNKS_OPTION
                    + "='" + count + "'";
        }
    }

    /** Which way device memory goes on this domain, for descriptions and logs. */
    String path() {
        return "staged through pinned host memory, " + chunks + " x " + chunkBytes + " B chunks per direction ("
                + DeviceMemory.OPTION + "=" + provider + ")";
    }

    int chunkBytes() {
        return chunkBytes;
    }

    /**
     * Memory for a device region. The first one allocates the chunk pool and each new device its copy streams,
     * which blocks for the driver calls, as registration may.
     *
     * @throws DeviceUnavailableException if the device memory provider cannot serve the device
     */
    TcpMemory register(final MemorySegment segment, final Device.Cuda device) {
        final DeviceMemory memory = DeviceMemory.require(provider, device.ordinal());
        stream(toHost, memory, device.ordinal());
        stream(toDevice, memory, device.ordinal());
        if (all.isEmpty()) {
            allocate(memory, device.ordinal());
        }
        deviceRegions++;
        return TcpMemory.device(segment, device.ordinal(), memory);
    }

    /**
     * Whether a staged copy may touch {@code memory} now: it is registered and still holds its allocation
     * ({@link TcpMemory#loss()}). Memory found lost is retired at once, so that its key refuses every later request
     * ({@code REGION_DEREGISTERED}, and {@code UNKNOWN_KEY} once the engine's scope sweep, within a millisecond,
     * deregistered, counted and logged it). Worker thread; one provider call.
     */
    static boolean holds(final TcpMemory memory) {
        if (!memory.live()) {
            return false;
        }
        if (memory.loss() == null) {
            return true;
        }
        memory.retire();
        return false;
    }

    /** Whether a staging chunk is still copying into or out of {@code segment}'s memory, or a write from it waits. */
    boolean touches(final MemorySegment segment) {
        for (final TcpChunk chunk : copyingIn) {
            if (chunk.memory != null && chunk.memory.segment().equals(segment)) {
                return true;
            }
        }
        for (final TcpChunk chunk : copyingOut) {
            if (chunk.owner != null && chunk.owner.source.segment().equals(segment)) {
                return true;
            }
        }
        for (final StagedWrite write : writes) {
            if (write.source.segment().equals(segment)) {
                return true;
            }
        }
        return false;
    }

    /** A device region was deregistered: frees the pool and streams once nothing uses them. */
    void deregistered() {
        deviceRegions--;
        releaseIfUnused();
    }

    // ---- sending ----

    /** Queues a device write; its pieces are copied off the device and posted to {@code peer} as chunks free up. */
    void stageOut(
            final TcpDomain domain,
            final TcpPeer peer,
            final byte type,
            final TcpMemory source,
            final WriteDescriptor write) {
        writes.addLast(new StagedWrite(peer, type, source, write));
        issueOut(domain);
    }

    /** A piece's request ended: with its ACK ({@code error} null), a refusal or a lost connection. */
    void pieceEnded(final TcpDomain domain, final TcpOp op, final @Nullable TransferEngineException error) {
        final TcpChunk chunk = Objects.requireNonNull(op.chunk);
        final StagedWrite write = Objects.requireNonNull(chunk.owner);
        domain.release(op);
        chunk.idle();
        if (!all.isEmpty()) {
            freeOut.addLast(chunk);
        }
        write.outstanding--;
        if (error != null) {
            fail(domain, write, error);
        } else if (!write.failed && write.outstanding == 0 && write.issued == write.length) {
            domain.stagedEnded(write.token, write.length, null);
        }
    }

    /** Posts pieces that are off the device, starts copies into free chunks and frees landed ones; the work done. */
    int poll(final TcpDomain domain) {
        int work = 0;
        TcpChunk chunk;
        while ((chunk = copyingOut.peekFirst()) != null && copied(domain, chunk)) {
            copyingOut.pollFirst();
            final TcpOp op = Objects.requireNonNull(chunk.op);
            final StagedWrite owner = Objects.requireNonNull(chunk.owner);
            chunk.stream = null;
            if (owner.failed) {
                pieceEnded(domain, op, null);
            } else {
                owner.posted += op.length;
                domain.post(owner.peer, op);
            }
            work++;
        }
        try {
            for (int i = copyingIn.size() - 1; i >= 0; i--) {
                final TcpChunk landed = copyingIn.get(i);
                if (landed.copied()) {
                    copyingIn.remove(i);
                    landed.idle();
                    freeIn.addLast(landed);
                    work++;
                }
            }
        } catch (final DeviceUnavailableException e) {
            // A copy into the device failed: its context is lost (e.g. memory freed under a queued copy), so nothing
            // lands through it any more; asking again would fail the same way on every poll.
            copyingIn.clear();
            domain.deviceLost(e);
            work++;
        }
        work += issueOut(domain);
        if (deviceRegions == 0 && !all.isEmpty()) {
            releaseIfUnused();
        }
        return work;
    }

    // ---- receiving, for TcpLanding ----

    /** A free receive chunk, or null while all are busy. */
    @Nullable TcpChunk takeIn() {
        return freeIn.pollFirst();
    }

    boolean hasFreeIn() {
        return !freeIn.isEmpty();
    }

    void giveBackIn(final TcpChunk chunk) {
        if (!all.isEmpty()) {
            freeIn.addLast(chunk);
        }
    }

    /**
     * Enqueues the copy of the chunk's first {@code length} bytes to {@code target}'s device at {@code
     * deviceAddress}; the chunk frees itself after. The caller checked {@link #holds} right before.
     */
    long copyIn(final TcpChunk chunk, final TcpMemory target, final long deviceAddress, final long length) {
        final DeviceCopyStream stream = toDevice.get(target.device());
        chunk.copying(stream, stream.copyToDevice(chunk.segment, deviceAddress, length));
        chunk.memory = target;
        copyingIn.add(chunk);
        return chunk.ticket;
    }

    DeviceCopyStream toDevice(final int device) {
        return toDevice.get(device);
    }

    /** Fails the staged writes, waits for the copies and frees the streams and chunks. Blocks. */
    void close(final TcpDomain domain) {
        final EngineClosedException closed = new EngineClosedException("domain closed before the device copy finished");
        TcpChunk chunk;
        while ((chunk = copyingOut.pollFirst()) != null) {
            domain.release(Objects.requireNonNull(chunk.op));
            fail(domain, Objects.requireNonNull(chunk.owner), closed);
        }
        StagedWrite write;
        while ((write = writes.pollFirst()) != null) {
            fail(domain, write, closed);
        }
        free();
    }

    private int issueOut(final TcpDomain domain) {
        int issued = 0;
        StagedWrite write;
        while ((write = writes.peekFirst()) != null && !freeOut.isEmpty()) {
            final TcpChunk chunk = freeOut.pollFirst();
            final long piece = Math.min(chunkBytes, write.length - write.issued);
            if (!holds(write.source)) { // freed while registered: copying would send another allocation's bytes
                freeOut.addFirst(chunk);
                failSource(domain, write, sourceLost(write), TcpReadFailure.MEMORY_LOST);
                continue;
            }
            try {
                chunk.copying(
                        toHost.get(write.device),
                        toHost.get(write.device).copyToHost(write.deviceAddress + write.issued, chunk.segment, piece));
            } catch (final DeviceUnavailableException e) {
                freeOut.addFirst(chunk);
                failSource(domain, write, e, TcpReadFailure.COPY_FAILED);
                continue;
            }
            final boolean last = write.issued + piece == write.length;
            // a write's imm rides on its last piece only; every piece of a served read is READ_DATA for that read
            final byte type = last || write.type == TcpFrame.READ_DATA ? write.type : TcpFrame.WRITE;
            final TcpOp op = domain.acquire().piece(type, write.write, chunk.segment, write.issued, piece);
            op.chunk = chunk;
            chunk.op = op;
            chunk.owner = write;
            write.issued += piece;
            write.outstanding++;
            copyingOut.addLast(chunk);
            if (last) {
                writes.pollFirst();
            }
            issued++;
        }
        return issued;
    }

    private static InvalidRequestException sourceLost(final StagedWrite write) {
        return new InvalidRequestException("source region at 0x"
                + Long.toHexString(write.source.segment().address())
                + " on device " + write.device + " was deregistered: its memory was freed (or its region deregistered)"
                + " while the write was being sent; nothing more of it was copied");
    }

    /** Whether the chunk's copy off the device finished; a failed copy fails its write (and counts as finished). */
    private boolean copied(final TcpDomain domain, final TcpChunk chunk) {
        try {
            return chunk.copied();
        } catch (final DeviceUnavailableException e) {
            failSource(domain, Objects.requireNonNull(chunk.owner), e, TcpReadFailure.COPY_FAILED);
            return true;
        }
    }

    /**
     * Its source failed the write part-way: nothing more of it is copied or sent. A served read's reader is told
     * (READ_FAILED, behind the pieces already posted), so its read fails there at once rather than at its deadline.
     */
    private void failSource(
            final TcpDomain domain,
            final StagedWrite write,
            final TransferEngineException error,
            final TcpReadFailure why) {
        if (!write.failed && write.type == TcpFrame.READ_DATA) {
            domain.readServer().stopped(write.peer, write.write.imm(), why, write.posted);
        }
        fail(domain, write, error);
    }

    private void fail(final TcpDomain domain, final StagedWrite write, final TransferEngineException error) {
        if (!write.failed) {
            write.failed = true;
            writes.remove(write);
            domain.stagedEnded(write.token, write.length, error);
        }
    }

    private void stream(
            final Int2ObjectHashMap<DeviceCopyStream> streams, final DeviceMemory memory, final int device) {
        if (streams.containsKey(device)) {
            return;
        }
        final DeviceCopyStream stream = memory.openCopyStream(device);
        streams.put(device, stream);
        if (stream.capacity() < chunks) {
            throw new DeviceUnavailableException(CHUNKS_OPTION + "=" + chunks + " exceeds the " + stream.capacity()
                    + " copies a '" + provider + "' copy stream takes");
        }
    }

    private void allocate(final DeviceMemory memory, final int device) {
        try {
            for (int i = 0; i < 2 * chunks; i++) {
                final TcpChunk chunk = new TcpChunk(memory.allocateStaging(device, chunkBytes));
                all.add(chunk);
                (i < chunks ? freeOut : freeIn).addLast(chunk);
            }
        } catch (final RuntimeException e) {
            free();
            throw e;
        }
    }

    private void releaseIfUnused() {
        if (deviceRegions == 0 && writes.isEmpty() && freeOut.size() + freeIn.size() == all.size()) {
            free();
        }
    }

    private void free() {
        for (final DeviceCopyStream stream : toHost.values()) {
            stream.close();
        }
        for (final DeviceCopyStream stream : toDevice.values()) {
            stream.close();
        }
        toHost.clear();
        toDevice.clear();
        for (final TcpChunk chunk : all) {
            chunk.buffer.close();
        }
        all.clear();
        freeOut.clear();
        freeIn.clear();
        copyingIn.clear();
    }
}
