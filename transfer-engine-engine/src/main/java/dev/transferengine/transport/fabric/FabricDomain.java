package dev.transferengine.transport.fabric;

import dev.transferengine.BackPressureException;
import dev.transferengine.Device;
import dev.transferengine.EngineClosedException;
import dev.transferengine.InvalidRequestException;
import dev.transferengine.NetAddr;
import dev.transferengine.PeerInfo;
import dev.transferengine.TransferEngineException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import org.agrona.collections.IntArrayQueue;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.transferengine.transport.fabric.FabricLayout.*;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One NIC on libfabric: an RDM endpoint with its CQ and AV ({@link FabricEndpoint}), its regions
 * ({@link FabricRegions}), its peers ({@link FabricPeers}) and a pool of operation slots ({@link FabricOps}).
 *
 * <p>Posting follows the EFA policy of the reference: a new operation is posted once at once (when nothing is
 * queued before it); what the provider turns away with -FI_EAGAIN, and everything queued behind it, waits in a
 * queue that {@link #poll()} works through by at most {@code fabric.postsPerPoll} attempts per call. An operation
 * turned away again goes to the back, so one peer that cannot take work (still connecting, unreachable) never
 * holds up the others: delivery is unordered anyway. {@link #poll()} then reads
 * the CQ in batches of 16: remote CQ data becomes {@link DomainListener#onImm}, local completions complete their
 * operation, and errors are read with fi_cq_readerr and reported as typed exceptions. Progress is manual on
 * tcp/shm, so the target must keep polling for writes to land.
 *
 * <p>Single-threaded: only the owning worker calls it, except {@link #peers()} and {@link #failure()}. The data
 * path (write, send, postReceive, poll) does not allocate while the slot pool has room.
 */
final class FabricDomain implements Domain {

    private static final Logger LOG = LoggerFactory.getLogger(FabricDomain.class);

    private static final long FI_ADDR_UNSPEC = -1L;
    private static final long FI_RECV = 1L << 10;
    private static final long FI_REMOTE_CQ_DATA = 1L << 17;
    private static final long FI_COMPLETION = 1L << 24;
    private static final long FI_DELIVERY_COMPLETE = 1L << 28;
    private static final int CQ_BATCH = 16;
    private static final int CQ_BATCHES_PER_POLL = 4;

    private final FabricEndpoint endpoint;
    private final DomainListener listener;
    private final Arena arena = Arena.ofShared();
    private final FabricRegions regions;
    private final FabricPeers peers;
    private final FabricOps ops;
    private final IntArrayQueue pending = new IntArrayQueue(IntArrayQueue.DEFAULT_NULL_VALUE);
    private final MemorySegment entries = arena.allocate(CQE_SIZE * CQ_BATCH, 8);
    private final MemorySegment errEntry = arena.allocate(ERR_ENTRY_BYTES, 8);
    private final MemorySegment errText = arena.allocate(512);
    private final int postsPerPoll;
    private final long writeFlags;
    private final long zeroByteWriteFlags;
    private final NetAddr address;
    private final String description;
    private boolean closed;
    private boolean toldOfUnusedTail;
    private volatile @Nullable String failure;

    FabricDomain(
            final FabricEndpoint endpoint,
            final DomainListener listener,
            final int group,
            final int nic,
            final long caps,
            final int postsPerPoll,
            final int maxOps,
            final boolean deliveryComplete,
            final boolean zeroByteDeliveryComplete) {
        this.endpoint = endpoint;
        this.listener = listener;
        this.regions = new FabricRegions(endpoint, arena, caps);
        this.peers = new FabricPeers(endpoint, arena, group, nic);
        this.ops = new FabricOps(arena, maxOps, endpoint.tagged());
        this.postsPerPoll = postsPerPoll;
        this.writeFlags = FI_COMPLETION | (deliveryComplete ? FI_DELIVERY_COMPLETE : 0);
        this.zeroByteWriteFlags =
                FI_COMPLETION | (deliveryComplete && zeroByteDeliveryComplete ? FI_DELIVERY_COMPLETE : 0);
        this.address = FabricAddress.of(endpoint.provider(), endpoint.name());
        this.description = "fabric " + endpoint.provider() + " " + endpoint.domainName() + " (API "
                + FabricLibrary.versionText(endpoint.apiVersion()) + ", mr_mode 0x"
                + Integer.toHexString(endpoint.mrMode())
                + (endpoint.tagged() ? "" : ", untagged sends")
                + ", group " + group + " nic " + nic + ")";
    }

    @Override
    public NetAddr address() {
        return address;
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public long register(final MemorySegment segment, final Device device) {
        ensureOpen();
        return regions.register(segment, device);
    }

    @Override
    public void deregister(final long rkey) {
        if (!closed) {
            regions.deregister(rkey);
        }
    }

    @Override
    public long resolve(final NetAddr peer) {
        ensureOpen();
        return peers.resolve(peer);
    }

    @Override
    public void write(final WriteDescriptor write) {
        final long token = write.token();
        final long length = write.length();
        final long srcKey = write.srcKey();
        final long peer = write.peer();
        final TransferEngineException refused = refusal();
        if (refused != null) {
            listener.onWriteFailed(token, refused);
            return;
        }
        if (length > 0 && !regions.isRegistered(srcKey)) {
            listener.onWriteFailed(
                    token,
                    new InvalidRequestException("source key " + srcKey + " is not registered on " + description));
            return;
        }
        final int slot = ops.acquire(FabricOps.WRITE, token, length, peer);
        if (slot < 0) {
            listener.onWriteFailed(token, saturated());
            return;
        }
        ops.prepareWrite(
                slot,
                write.src().address() + write.srcOffset(),
                length,
                regions.desc(srcKey),
                peer,
                regions.remoteAddress(write.remoteBase(), write.remoteOffset()),
                write.rkey(),
                write.hasImm() ? write.imm() & 0xFFFF_FFFFL : 0);
        final long postFlags = length == 0 ? zeroByteWriteFlags : writeFlags;
        submit(slot, write.hasImm() ? postFlags | FI_REMOTE_CQ_DATA : postFlags);
    }

    @Override
    public void send(final long token, final long peer, final MemorySegment message) {
        final TransferEngineException refused = refusal();
        if (refused != null) {
            listener.onSendFailed(token, refused);
            return;
        }
        final int slot = ops.acquire(FabricOps.SEND, token, message.byteSize(), peer);
        if (slot < 0) {
            listener.onSendFailed(token, saturated());
            return;
        }
        ops.prepareSend(slot, message.address(), message.byteSize(), localDesc(slot, message), peer);
        submit(slot, FI_COMPLETION);
    }

    @Override
    public void postReceive(final long token, final MemorySegment buffer) {
        if (refusal() != null) {
            return;
        }
        final int slot = ops.acquire(FabricOps.RECV, token, buffer.byteSize(), FI_ADDR_UNSPEC);
        if (slot < 0) {
            LOG.warn("{}: no operation slot left for a receive buffer; it is not posted", description);
            return;
        }
        final long bytes = buffer.byteSize();
        if (endpoint.tagged() && Long.bitCount(bytes) > 1 && !toldOfUnusedTail) {
            toldOfUnusedTail = true;
            LOG.info(
                    "{}: a receive buffer of {} bytes takes sends of up to {} bytes (the largest power of two that"
                            + " fits); larger ones wait for a larger buffer",
                    description,
                    bytes,
                    Long.highestOneBit(bytes));
        }
        ops.prepareReceive(slot, buffer.address(), bytes, localDesc(slot, buffer), FI_ADDR_UNSPEC);
        submit(slot, FI_COMPLETION);
    }

    /** The descriptor for a send or receive buffer; registers it for the operation's life where FI_MR_LOCAL asks. */
    private long localDesc(final int slot, final MemorySegment buffer) {
        if (!regions.localRegistration()) {
            return 0;
        }
        final long key = regions.covering(buffer.address(), buffer.byteSize());
        if (key != 0) {
            return regions.desc(key);
        }
        final long temporary = regions.registerLocal(buffer.address(), buffer.byteSize());
        ops.localKey[slot] = temporary;
        return regions.desc(temporary);
    }

    private @Nullable TransferEngineException refusal() {
        if (closed) {
            return new EngineClosedException(description + " is closed");
        }
        final String why = failure;
        return why == null ? null : new TransferEngineException(description + " failed: " + why);
    }

    private TransferEngineException saturated() {
        return new BackPressureException(description + " has " + ops.capacity()
                + " operations outstanding (fabric.maxOps); retry when some complete");
    }

    private void submit(final int slot, final long postFlags) {
        ops.flags[slot] = postFlags;
        if (pending.isEmpty()) {
            final long rc = post(slot);
            if (rc == -FabricFailures.FI_EAGAIN) {
                pending.offerInt(slot);
            } else if (rc < 0) {
                failPost(slot, rc);
            }
        } else {
            pending.offerInt(slot);
        }
    }

    private long post(final int slot) {
        if (ops.kind[slot] != FabricOps.RECV && peers.isClosedHere(ops.peer[slot])) {
            return -FabricFailures.FI_ENOTCONN; // its memory is about to be unmapped: never hand it to the provider
        }
        final MemorySegment msg = ops.message(slot);
        return switch (ops.kind[slot]) {
            case FabricOps.WRITE -> endpoint.writeMsg(msg, ops.flags[slot]);
            case FabricOps.SEND -> endpoint.sendMsg(msg, ops.flags[slot]);
            default -> endpoint.recvMsg(msg, ops.flags[slot]);
        };
    }

    private void failPost(final int slot, final long rc) {
        final String function =
                switch (ops.kind[slot]) {
                    case FabricOps.WRITE -> "fi_writemsg";
                    case FabricOps.SEND -> endpoint.tagged() ? "fi_tsendmsg" : "fi_sendmsg";
                    default -> endpoint.tagged() ? "fi_trecvmsg" : "fi_recvmsg";
                };
        final int err = (int) -rc;
        final String text = function + ": " + endpoint.library().describe(err);
        finishWithError(slot, err, 0, text);
    }

    @Override
    public int poll() {
        if (closed) {
            return 0;
        }
        int work = 0;
        work += drainPending();
        for (int batch = 0; batch < CQ_BATCHES_PER_POLL; batch++) {
            final long n = endpoint.cqRead(entries, CQ_BATCH);
            if (n > 0) {
                for (int i = 0; i < n; i++) {
                    complete(i * CQE_SIZE);
                }
                work += (int) n;
                if (n < CQ_BATCH) {
                    break;
                }
            } else if (n == -FabricFailures.FI_EAVAIL) {
                readError();
                work++;
            } else if (n == -FabricFailures.FI_EAGAIN) {
                break;
            } else {
                fail("fi_cq_read failed: " + endpoint.library().describe((int) n) + " (" + n + ")");
                break;
            }
        }
        peers.releaseClosed();
        return work;
    }

    private int drainPending() {
        int posted = 0;
        for (int attempt = Math.min(postsPerPoll, pending.size()); attempt > 0; attempt--) {
            final int slot = pending.pollInt();
            final long rc = post(slot);
            if (rc == -FabricFailures.FI_EAGAIN) {
                pending.offerInt(slot);
            } else {
                if (rc < 0) {
                    failPost(slot, rc);
                }
                posted++;
            }
        }
        return posted;
    }

    private void complete(final long offset) {
        final long cqFlags = entries.get(JAVA_LONG, offset + CQE_FLAGS);
        if ((cqFlags & FI_REMOTE_CQ_DATA) != 0 && (cqFlags & FI_RECV) == 0) {
            listener.onImm((int) entries.get(JAVA_LONG, offset + CQE_DATA));
            final long bytes = entries.get(JAVA_LONG, offset + CQE_LEN);
            if (bytes > 0) {
                listener.onBytesReceived(bytes);
            }
            return;
        }
        final int slot = ops.slotOf(entries.get(JAVA_LONG, offset + CQE_OP_CONTEXT));
        if (slot < 0) {
            return;
        }
        final long token = ops.token[slot];
        final long bytes = ops.length[slot];
        final byte kind = ops.kind[slot];
        final long peer = ops.peer[slot];
        final int received = (int) entries.get(JAVA_LONG, offset + CQE_LEN);
        release(slot);
        switch (kind) {
            case FabricOps.WRITE -> {
                peers.markReachable(peer);
                listener.onWriteComplete(token, bytes);
            }
            case FabricOps.SEND -> {
                peers.markReachable(peer);
                listener.onSendComplete(token, bytes);
            }
            default -> listener.onReceive(token, received);
        }
    }

    private void readError() {
        errEntry.fill((byte) 0);
        final long rc = endpoint.cqReadErr(errEntry);
        if (rc < 0) {
            if (rc != -FabricFailures.FI_EAGAIN) {
                fail("fi_cq_readerr failed: " + endpoint.library().describe((int) rc));
            }
            return;
        }
        final int err = errEntry.get(JAVA_INT, ERR_ERR);
        final int provErrno = errEntry.get(JAVA_INT, ERR_PROV_ERRNO);
        final String providerText = endpoint.cqStrerror(provErrno, errEntry.get(JAVA_LONG, ERR_ERR_DATA), errText);
        final String text = endpoint.library().describe(err)
                + (providerText.isEmpty() ? "" : "; provider: " + providerText)
                + " (prov_errno " + provErrno + ")";
        final int slot = ops.slotOf(errEntry.get(JAVA_LONG, ERR_OP_CONTEXT));
        if (slot < 0) {
            LOG.warn("{}: completion error without an operation of ours: {}", description, text);
            return;
        }
        finishWithError(slot, err, provErrno, text);
    }

    private void finishWithError(final int slot, final int err, final int provErrno, final String text) {
        final long token = ops.token[slot];
        final byte kind = ops.kind[slot];
        final long peer = ops.peer[slot];
        release(slot);
        final NetAddr peerAddress = kind == FabricOps.RECV ? null : peers.address(peer);
        final TransferEngineException error = FabricFailures.translate(
                err, provErrno, text, kind == FabricOps.WRITE, peerAddress, endpoint.provider());
        if (FabricFailures.isUnreachable(err, provErrno) && peerAddress != null) {
            peers.markUnreachable(peer, text);
        }
        switch (kind) {
            case FabricOps.WRITE -> listener.onWriteFailed(token, error);
            case FabricOps.SEND -> listener.onSendFailed(token, error);
            default -> LOG.warn("{}: receive buffer {} failed and is dropped: {}", description, token, text);
        }
    }

    private void release(final int slot) {
        final long temporary = ops.localKey[slot];
        if (temporary != 0) {
            regions.deregister(temporary);
        }
        ops.release(slot);
    }

    /** A fatal CQ error: the domain stops; what is outstanding fails. */
    private void fail(final String why) {
        LOG.error("{}: {}", description, why);
        failure = why;
        failOutstanding(new TransferEngineException(description + " failed: " + why));
    }

    private void failOutstanding(final TransferEngineException error) {
        pending.clear();
        for (int slot = 0; slot < ops.kind.length; slot++) {
            final byte kind = ops.kind[slot];
            if (kind == 0) {
                continue;
            }
            final long token = ops.token[slot];
            release(slot);
            if (kind == FabricOps.WRITE) {
                listener.onWriteFailed(token, error);
            } else if (kind == FabricOps.SEND) {
                listener.onSendFailed(token, error);
            }
        }
    }

    @Override
    public @Nullable String failure() {
        return failure;
    }

    @Override
    public List<PeerInfo> peers() {
        return peers.snapshot();
    }

    /** Worker thread: drops the operation's queued posts; one already handed to the provider completes as usual. */
    @Override
    public void cancel(final long token) {
        for (int n = pending.size(); n > 0; n--) {
            final int slot = pending.pollInt();
            if (ops.token[slot] == token && ops.kind[slot] != FabricOps.RECV) {
                release(slot);
            } else {
                pending.offerInt(slot);
            }
        }
    }

    /** Operations posted or queued and not yet completed. */
    int outstanding() {
        return ops.inUse();
    }

    private void ensureOpen() {
        if (closed) {
            throw new EngineClosedException(description + " is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            regions.closeAll();
            peers.releaseAll();
            endpoint.close();
        } finally {
            // The endpoint is gone, so the provider no longer touches the slots: fail what it still held.
            failOutstanding(new EngineClosedException(description + " closed with the operation outstanding"));
            arena.close();
        }
    }
}
