package dev.transferengine.transport.fabric;

import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import static dev.transferengine.transport.fabric.FabricLayout.*;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A pool of operation slots in native memory. Each slot holds what one posted operation needs while the provider
 * owns it: its {@code fi_context2} (which is also the completion's {@code op_context}), one iovec, one fi_rma_iov,
 * a one-entry descriptor array and the fi_msg_rma, fi_msg_tagged or fi_msg pointing at them. The Java side of a slot (token,
 * kind, length, peer) lives in parallel arrays. Slots are built once, reused, and found again from a completion's
 * context through the slot index stored right after the context. The pool grows by chunks up to a limit.
 *
 * <p>Single-threaded (the domain's worker). Acquire, release and lookup do not allocate, except when a new chunk
 * is added.
 */
final class FabricOps {

    static final byte WRITE = 1;
    static final byte SEND = 2;
    static final byte RECV = 3;
    /** A negative acknowledgement going out (FabricControl): tagged {@link #CONTROL_TAG}, reported to nobody. */
    static final byte CONTROL_SEND = 4;
    /** A buffer for incoming negative acknowledgements: matches {@link #CONTROL_TAG} only. */
    static final byte CONTROL_RECV = 5;
    /** A one-sided read (fi_readmsg): its fi_msg_rma is filled like a write's, with the local iov as the target. */
    static final byte READ = 6;

    /** Whether {@code kind} is someone's operation (reported to the listener), not a buffer or a control message. */
    static boolean isOperation(final byte kind) {
        return kind == WRITE || kind == READ || kind == SEND;
    }

    /**
     * The tag of control messages. No size class sets it ({@link #sizeTag} sets the low bits of a length below
     * 2^31) and no receive buffer ignores it (its ignore bits are the {@link #sizeTag} of its size), so control messages
     * and the user's messages never take each other's buffers.
     */
    static final long CONTROL_TAG = 1L << 60;

    private static final long SLOT_INDEX = CONTEXT2_BYTES;
    private static final long SLOT_IOV = SLOT_INDEX + 8;
    private static final long SLOT_RMA_IOV = SLOT_IOV + IOVEC.byteSize();
    private static final long SLOT_DESC = SLOT_RMA_IOV + FI_RMA_IOV.byteSize();
    private static final long SLOT_MSG = SLOT_DESC + 8;
    private static final long SLOT_BYTES = roundUp(
            SLOT_MSG + Math.max(FI_MSG_RMA.byteSize(), Math.max(FI_MSG.byteSize(), FI_MSG_TAGGED.byteSize())), 64);
    private static final int CHUNK_SHIFT = 8;
    private static final int CHUNK = 1 << CHUNK_SHIFT;

    private final Arena arena;
    /**
     * The context of writes posted without a completion ({@link #uncounted}): no slot's, so that a completion a
     * provider wrote for one anyway is never taken for a slot's (its index is -1).
     */
    private final MemorySegment uncountedContext;

    private final int maxChunks;
    private final boolean tagged;
    private MemorySegment[] chunks = new MemorySegment[0];
    private MemorySegment[] messages = new MemorySegment[0];
    private int[] free = new int[0];
    private int freeCount;
    private int inUse;

    long[] token = new long[0];
    byte[] kind = new byte[0];
    long[] length = new long[0];
    long[] peer = new long[0];
    /** The flags the slot is posted with. */
    long[] flags = new long[0];
    /** For operations that needed a temporary local registration (FI_MR_LOCAL): its rkey, else 0. */
    long[] localKey = new long[0];
    /**
     * The {@linkplain FabricPeers#epoch epoch} of the peer when the slot was posted to it; {@link #NOT_POSTED} while
     * the provider does not hold it.
     */
    int[] epoch = new int[0];

    /** The {@link #epoch} of a slot the provider does not hold (not posted yet, or turned away). */
    static final int NOT_POSTED = -1;

    /**
     * @param tagged whether sends and receives are tagged messages (fi_msg_tagged, matched by size class) rather than
     *     untagged ones (fi_msg, matched in post order); see {@link FabricEndpoint#tagged()}
     */
    FabricOps(final Arena arena, final int maxSlots, final boolean tagged) {
        this.arena = arena;
        this.tagged = tagged;
        this.maxChunks = Math.max(1, (maxSlots + CHUNK - 1) >>> CHUNK_SHIFT);
        this.uncountedContext = arena.allocate(SLOT_BYTES, 64);
        uncountedContext.set(JAVA_INT, SLOT_INDEX, -1);
    }

    private static long roundUp(final long value, final long to) {
        return (value + to - 1) / to * to;
    }

    /** A free slot index, or -1 when the pool is at its limit. */
    int acquire(final byte opKind, final long opToken, final long opLength, final long opPeer) {
        if (freeCount == 0 && !grow()) {
            return -1;
        }
        final int slot = free[--freeCount];
        kind[slot] = opKind;
        token[slot] = opToken;
        length[slot] = opLength;
        peer[slot] = opPeer;
        localKey[slot] = 0;
        epoch[slot] = NOT_POSTED;
        inUse++;
        return slot;
    }

    void release(final int slot) {
        kind[slot] = 0;
        free[freeCount++] = slot;
        inUse--;
    }

    int inUse() {
        return inUse;
    }

    int capacity() {
        return maxChunks << CHUNK_SHIFT;
    }

    /** The slot a completion's {@code op_context} belongs to, or -1 when it is none of ours. */
    int slotOf(final long context) {
        if (context == 0) {
            return -1;
        }
        final int slot = FabricLibrary.NATIVE.get(JAVA_INT, context + SLOT_INDEX);
        if (slot < 0 || slot >= chunks.length << CHUNK_SHIFT || address(slot) != context || kind[slot] == 0) {
            return -1;
        }
        return slot;
    }

    long address(final int slot) {
        return chunks[slot >>> CHUNK_SHIFT].address() + (long) (slot & (CHUNK - 1)) * SLOT_BYTES;
    }

    /** The fi_msg_rma, fi_msg_tagged or fi_msg of a slot, as a segment to pass to the post call. */
    MemorySegment message(final int slot) {
        return messages[slot];
    }

    /**
     * Fills a slot's fi_msg_rma for {@code write}, to {@code remoteAddress} (translated for the provider's mr_mode).
     * A zero-byte write still carries one rma_iov with a valid address and key (EFA requires it). A read's message
     * is the same: {@code write.src()} is then the local memory the bytes land in, and no data is carried.
     */
    void prepareWrite(
            final int slot, final WriteDescriptor write, final long desc, final long fiAddr, final long remoteAddress) {
        final long localAddress = write.src().address() + write.srcOffset();
        final long bytes = write.length();
        final long rkey = write.rkey();
        final long data = write.hasImm() ? write.imm() & 0xFFFF_FFFFL : 0;
        final long base = address(slot);
        final MemorySegment m = FabricLibrary.NATIVE;
        m.set(JAVA_LONG, base + SLOT_IOV + IOV_BASE, localAddress);
        m.set(JAVA_LONG, base + SLOT_IOV + IOV_LEN, bytes);
        m.set(JAVA_LONG, base + SLOT_RMA_IOV + RMA_IOV_ADDR, remoteAddress);
        m.set(JAVA_LONG, base + SLOT_RMA_IOV + RMA_IOV_LEN, bytes);
        m.set(JAVA_LONG, base + SLOT_RMA_IOV + RMA_IOV_KEY, rkey);
        m.set(JAVA_LONG, base + SLOT_DESC, desc);
        final long msg = base + SLOT_MSG;
        m.set(JAVA_LONG, msg + MSG_RMA_MSG_IOV, base + SLOT_IOV);
        m.set(JAVA_LONG, msg + MSG_RMA_DESC, base + SLOT_DESC);
        m.set(JAVA_LONG, msg + MSG_RMA_IOV_COUNT, bytes == 0 ? 0 : 1);
        m.set(JAVA_LONG, msg + MSG_RMA_ADDR, fiAddr);
        m.set(JAVA_LONG, msg + MSG_RMA_RMA_IOV, base + SLOT_RMA_IOV);
        m.set(JAVA_LONG, msg + MSG_RMA_RMA_IOV_COUNT, 1);
        m.set(JAVA_LONG, msg + MSG_RMA_CONTEXT, base);
        m.set(JAVA_LONG, msg + MSG_RMA_DATA, data);
    }

    /** The remote key of a prepared write or read. */
    long remoteKey(final int slot) {
        return FabricLibrary.NATIVE.get(JAVA_LONG, address(slot) + SLOT_RMA_IOV + RMA_IOV_KEY);
    }

    /** The remote address (as posted: virtual or an offset) of a prepared write or read. */
    long remoteAddress(final int slot) {
        return FabricLibrary.NATIVE.get(JAVA_LONG, address(slot) + SLOT_RMA_IOV + RMA_IOV_ADDR);
    }

    /**
     * Gives a prepared write the shared context of writes posted without FI_COMPLETION: the slot is released when its
     * post returns, so the provider must never hand its own context back (see {@link #uncountedContext}).
     */
    void uncounted(final int slot) {
        FabricLibrary.NATIVE.set(JAVA_LONG, address(slot) + SLOT_MSG + MSG_RMA_CONTEXT, uncountedContext.address());
    }

    /** Points a prepared write, read or send at the peer's fi_addr_t {@code fiAddr} (it changes when the peer is reset). */
    void retarget(final int slot, final long fiAddr) {
        final long msg = address(slot) + SLOT_MSG;
        final long field = kind[slot] == WRITE || kind[slot] == READ ? MSG_RMA_ADDR : tagged ? TMSG_ADDR : MSG_ADDR;
        FabricLibrary.NATIVE.set(JAVA_LONG, msg + field, fiAddr);
    }

    /**
     * Fills a slot's message for a send of {@code bytes} to {@code fiAddr}. Tagged, it carries {@code tag}, the size
     * class of the receive buffers it may take ({@link FabricPoolSizes#tag}).
     */
    void prepareSend(
            final int slot, final long address, final long bytes, final long desc, final long fiAddr, final long tag) {
        prepareMessage(slot, address, bytes, desc, fiAddr, tag, 0);
    }

    /**
     * Fills a slot's message for a receive buffer of {@code bytes}, exactly the size its pool was asked for. Tagged,
     * it ignores the bits of its own size class ({@link #sizeTag}), so it takes every send tagged with a class up to
     * its own; the sender picks the class so that every such buffer fits the send ({@link FabricPoolSizes}).
     */
    void prepareReceive(final int slot, final long address, final long bytes, final long desc, final long fiAddr) {
        prepareMessage(slot, address, bytes, desc, fiAddr, 0, sizeTag(bytes));
    }

    /** The buffer a slot's message points at ({@link #prepareReceive} and the others): its address. */
    long bufferAddress(final int slot) {
        return FabricLibrary.NATIVE.get(JAVA_LONG, address(slot) + SLOT_IOV + IOV_BASE);
    }

    /** Fills a slot's message for a control send or a control receive buffer: tag {@link #CONTROL_TAG}, no bit ignored. */
    void prepareControl(final int slot, final long address, final long bytes, final long desc, final long fiAddr) {
        prepareMessage(slot, address, bytes, desc, fiAddr, CONTROL_TAG, 0);
    }

    /**
     * The tag of size class {@code ceil(log2(bytes))}: its low bits set. A receive posted with tag 0 and the tag of
     * its own size as its ignore bits matches a send exactly when no bit of the send's tag is set above them, that
     * is when the send's class is at most the buffer's. libfabric's untagged receives would take any buffer in post
     * order and truncate a larger send (FI_ETRUNC at the receiver, success at the sender).
     */
    static long sizeTag(final long bytes) {
        return bytes <= 1 ? 0 : -1L >>> Long.numberOfLeadingZeros(bytes - 1);
    }

    private void prepareMessage(
            final int slot,
            final long address,
            final long bytes,
            final long desc,
            final long fiAddr,
            final long tag,
            final long ignore) {
        final long base = address(slot);
        final MemorySegment m = FabricLibrary.NATIVE;
        m.set(JAVA_LONG, base + SLOT_IOV + IOV_BASE, address);
        m.set(JAVA_LONG, base + SLOT_IOV + IOV_LEN, bytes);
        m.set(JAVA_LONG, base + SLOT_DESC, desc);
        final long msg = base + SLOT_MSG;
        if (tagged) {
            m.set(JAVA_LONG, msg + TMSG_MSG_IOV, base + SLOT_IOV);
            m.set(JAVA_LONG, msg + TMSG_DESC, base + SLOT_DESC);
            m.set(JAVA_LONG, msg + TMSG_IOV_COUNT, 1);
            m.set(JAVA_LONG, msg + TMSG_ADDR, fiAddr);
            m.set(JAVA_LONG, msg + TMSG_TAG, tag);
            m.set(JAVA_LONG, msg + TMSG_IGNORE, ignore);
            m.set(JAVA_LONG, msg + TMSG_CONTEXT, base);
            m.set(JAVA_LONG, msg + TMSG_DATA, 0);
        } else {
            m.set(JAVA_LONG, msg + MSG_MSG_IOV, base + SLOT_IOV);
            m.set(JAVA_LONG, msg + MSG_DESC, base + SLOT_DESC);
            m.set(JAVA_LONG, msg + MSG_IOV_COUNT, 1);
            m.set(JAVA_LONG, msg + MSG_ADDR, fiAddr);
            m.set(JAVA_LONG, msg + MSG_CONTEXT, base);
            m.set(JAVA_LONG, msg + MSG_DATA, 0);
        }
    }

    private void resize(final int total) {
        messages = Arrays.copyOf(messages, total);
        token = Arrays.copyOf(token, total);
        kind = Arrays.copyOf(kind, total);
        length = Arrays.copyOf(length, total);
        peer = Arrays.copyOf(peer, total);
        flags = Arrays.copyOf(flags, total);
        localKey = Arrays.copyOf(localKey, total);
        epoch = Arrays.copyOf(epoch, total);
        free = Arrays.copyOf(free, total);
    }

    private boolean grow() {
        final int chunk = chunks.length;
        if (chunk >= maxChunks) {
            return false;
        }
        final MemorySegment memory = arena.allocate(SLOT_BYTES * CHUNK, 64);
        chunks = Arrays.copyOf(chunks, chunk + 1);
        chunks[chunk] = memory;
        final int total = (chunk + 1) << CHUNK_SHIFT;
        if (total > kind.length) {
            // the Java side doubles (up to the limit), so that a pool grown chunk by chunk to 100,000 slots within
            // one paged write copies its arrays ~9 times, not ~390 (grow was 9% of the worker's samples there);
            // slots past the chunks stay free of kind (0) and are never handed out
            resize(Math.min(Math.max(total, kind.length * 2), capacity()));
        }
        for (int i = CHUNK - 1; i >= 0; i--) {
            final int slot = (chunk << CHUNK_SHIFT) + i;
            memory.set(JAVA_INT, i * SLOT_BYTES + SLOT_INDEX, slot);
            messages[slot] = memory.asSlice(i * SLOT_BYTES + SLOT_MSG, SLOT_BYTES - SLOT_MSG);
            free[freeCount++] = slot;
        }
        return true;
    }
}
