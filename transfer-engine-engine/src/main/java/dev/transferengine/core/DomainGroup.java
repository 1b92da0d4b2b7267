package dev.transferengine.core;

import dev.transferengine.BarrierWrite;
import dev.transferengine.EngineClosedException;
import dev.transferengine.EngineConfig;
import dev.transferengine.EngineCounter;
import dev.transferengine.GroupRouting;
import dev.transferengine.GroupSpec;
import dev.transferengine.ImmWrite;
import dev.transferengine.MrDesc;
import dev.transferengine.NetAddr;
import dev.transferengine.NicCounter;
import dev.transferengine.PagedWrite;
import dev.transferengine.PeerGroup;
import dev.transferengine.Routing;
import dev.transferengine.ScatterTarget;
import dev.transferengine.ScatterWrite;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngineException;
import dev.transferengine.TransferTimeoutException;
import dev.transferengine.WriteRequest;
import dev.transferengine.nativeaccess.CpuAffinity;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.Transport;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.IntArrayList;
import org.agrona.concurrent.Agent;
import org.jctools.queues.atomic.MpscAtomicArrayQueue;
import org.jctools.queues.atomic.MpscUnboundedAtomicArrayQueue;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One DomainGroup and its worker: owns 1-4 NICs, turns requests into per-NIC writes (sharding), counts their
 * completions and ends each request once. Everything here runs on the worker thread except {@link #offer},
 * {@link #control} and the read-only views; the worker never blocks.
 */
final class DomainGroup implements Agent {

    private static final Logger LOG = LoggerFactory.getLogger(DomainGroup.class);
    private static final int CONTROL_DRAIN_LIMIT = 8;
    private static final int SUBMISSION_DRAIN_LIMIT = 64;
    private static final long MIN_TIMEOUT_SCAN_NANOS = 1_000_000;
    private static final long MAX_TIMEOUT_SCAN_NANOS = 100_000_000;

    private final int index;
    private final GroupSpec spec;
    private final EngineConfig config;
    private final Transport transport;
    private final ImmCountTable imms;
    private final CallbackDispatcher callbacks;
    private final Counters counters;
    private final SendBuffers sendBuffers;
    private final Submissions pool;
    private final MpscAtomicArrayQueue<Submission> submissions;
    private final MpscUnboundedAtomicArrayQueue<Consumer<DomainGroup>> controls = new MpscUnboundedAtomicArrayQueue<>(64);
    private final CompletableFuture<Void> started = new CompletableFuture<>();
    private final Domain[] domains;
    private final Submission[] slots;
    private final int[] generations;
    /** Per slot, the NICs (bit per NIC) a piece of its operation was posted on, so a timeout cancels it there. */
    private final int[] postedNics;
    /** A stack, so the lowest slots are reused and the timeout scan stays short. */
    private final IntArrayList freeSlots;
    private final Int2ObjectHashMap<Receives> receivePools = new Int2ObjectHashMap<>();
    private final long timeoutNanos;
    private int active;
    private int roundRobin;
    private final long timeoutScanNanos;
    private long nextTimeoutScan;
    private int slotHighWater;
    private volatile boolean stopped;

    DomainGroup(final int index, final GroupSpec spec, final EngineConfig config, final Transport transport,
                final ImmCountTable imms, final CallbackDispatcher callbacks, final Counters counters,
                final SendBuffers sendBuffers, final Submissions pool) {
        this.index = index;
        this.spec = spec;
        this.config = config;
        this.transport = transport;
        this.imms = imms;
        this.callbacks = callbacks;
        this.counters = counters;
        this.sendBuffers = sendBuffers;
        this.pool = pool;
        this.submissions = new MpscAtomicArrayQueue<>(config.submitQueueCapacity());
        this.domains = new Domain[spec.nics()];
        this.slots = new Submission[config.maxInFlight()];
        this.generations = new int[config.maxInFlight()];
        this.postedNics = new int[config.maxInFlight()];
        this.freeSlots = new IntArrayList(config.maxInFlight(), IntArrayList.DEFAULT_NULL_VALUE);
        for (int i = slots.length - 1; i >= 0; i--) {
            freeSlots.pushInt(i);
        }
        this.timeoutNanos = config.operationTimeout().toNanos();
        // a timeout fires at most 1/64 of itself late, and a 30 s timeout costs one scan every 100 ms
        this.timeoutScanNanos = Math.clamp(timeoutNanos / 64, MIN_TIMEOUT_SCAN_NANOS, MAX_TIMEOUT_SCAN_NANOS);
    }

    // ---- any thread -------------------------------------------------------------------------------------------

    int index() {
        return index;
    }

    int nicCount() {
        return domains.length;
    }

    /** The domain of NIC {@code nic}; only its thread-safe views may be used off the worker. */
    Domain domain(final int nic) {
        return domains[nic];
    }

    CompletableFuture<Void> started() {
        return started;
    }

    boolean isStopped() {
        return stopped;
    }

    /** Queues a submission; false when the bounded queue is full. */
    boolean offer(final Submission submission) {
        return submissions.offer(submission);
    }

    /** Queues a control action for the worker (registration, peer resolution, receive posting...). */
    void control(final Consumer<DomainGroup> action) {
        controls.offer(action);
    }

    /** Runs {@code action} on the worker and returns its result to the caller's future. */
    <T> CompletableFuture<T> call(final Function<DomainGroup, T> action) {
        final CompletableFuture<T> result = new CompletableFuture<>();
        control(g -> {
            try {
                result.complete(action.apply(g));
            } catch (final RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    // ---- worker thread ----------------------------------------------------------------------------------------

    @Override
    public void onStart() {
        CpuAffinity.pinCurrentThread(spec.workerCpu(), "worker of group " + index);
        try {
            for (int nic = 0; nic < domains.length; nic++) {
                domains[nic] = transport.openDomain(new DomainContext(config, index, nic, new NicEvents(nic)));
            }
            started.complete(null);
        } catch (final RuntimeException e) {
            closeDomains();
            started.completeExceptionally(e);
            throw e;
        }
    }

    @Override
    public int doWork() {
        int work = drainControls();
        work += drainSubmissions();
        for (final Domain domain : domains) {
            work += domain.poll();
        }
        if (active > 0) {
            final long now = System.nanoTime();
            if (now - nextTimeoutScan >= 0) {
                nextTimeoutScan = now + timeoutScanNanos;
                work += expireTimedOut(now);
            }
        }
        return work;
    }

    @Override
    public void onClose() {
        stopped = true;
        final EngineClosedException closed = new EngineClosedException("engine closed while the operation was pending");
        Consumer<DomainGroup> action;
        while ((action = controls.poll()) != null) {
            action.accept(this);
        }
        for (int slot = 0; slot < slots.length; slot++) {
            final Submission s = slots[slot];
            if (s != null) {
                fail(s, closed);
                release(slot);
            }
        }
        failQueued(closed);
        closeDomains(); // receive buffers are freed by the engine once every worker stopped
    }

    /** Fails submissions still queued; also called by the engine after the worker stopped, for late arrivals. */
    void failQueued(final TransferEngineException error) {
        Submission s;
        while ((s = submissions.poll()) != null) {
            s.complete(error, callbacks, counters);
            releaseSendBuffer(s);
            pool.recycle(s);
        }
    }

    @Override
    public String roleName() {
        return "te-worker-" + index;
    }

    void addReceivePool(final Receives pool) {
        receivePools.put(pool.id(), pool);
        pool.start();
    }

    long[] resolveAll(final List<NetAddr> addresses) {
        final long[] handles = new long[domains.length];
        for (int nic = 0; nic < domains.length; nic++) {
            handles[nic] = domains[nic].resolve(addresses.get(nic));
        }
        return handles;
    }

    private int drainControls() {
        int work = 0;
        Consumer<DomainGroup> action;
        while (work < CONTROL_DRAIN_LIMIT && (action = controls.poll()) != null) {
            try {
                action.accept(this);
            } catch (final RuntimeException e) {
                counters.increment(EngineCounter.WORKER_ERRORS);
                LOG.warn("control action failed on group {}", index, e);
            }
            work++;
        }
        return work;
    }

    private int drainSubmissions() {
        int work = 0;
        while (work < SUBMISSION_DRAIN_LIMIT && !freeSlots.isEmpty()) {
            final Submission s = submissions.poll();
            if (s == null) {
                break;
            }
            try {
                start(s);
            } catch (final RuntimeException e) {
                counters.increment(EngineCounter.WORKER_ERRORS);
                LOG.error("starting {} failed unexpectedly", describe(s.request), e);
                abandon(s, s.remaining, new TransferEngineException("internal error starting the request: " + e, e));
            }
            work++;
        }
        return work;
    }

    private void start(final Submission s) {
        final int slot = freeSlots.popInt();
        slotHighWater = Math.max(slotHighWater, slot + 1);
        final int generation = ++generations[slot] & 0x3FFF_FFFF;
        slots[slot] = s;
        postedNics[slot] = 0;
        active++;
        s.token = (long) generation << 32 | slot;
        s.deadlineNanos = System.nanoTime() + timeoutNanos;
        if (s.isSend()) {
            s.remaining = 1;
            postSend(s);
            return;
        }
        switch (s.request) {
            case SingleWrite w -> postSingle(s, w);
            case PagedWrite w -> postPaged(s, w);
            case ImmWrite w -> postImm(s, w);
            case BarrierWrite w -> postBarrier(s, w);
            case ScatterWrite w -> postScatter(s, w);
            case null -> throw new IllegalStateException("write submission without request");
        }
    }

    private void postSend(final Submission s) {
        try {
            final Domain domain = domains[0];
            postedNics[slotOf(s.token)] = 1;
            domain.send(s.token, domain.resolve(s.sendPeer), s.sendBuffer);
        } catch (final TransferEngineException e) {
            abandon(s, 1, e);
        }
    }

    private void postSingle(final Submission s, final SingleWrite w) {
        final Region src = (Region) w.src();
        final int shards;
        final int first;
        if (w.routing() instanceof Routing.Pinned pinned) {
            shards = 1;
            first = pinned.nic();
        } else {
            shards = ((Routing.Sharded) w.routing()).shards();
            first = nextNics(shards);
        }
        final long shardSize = Sharding.shardSize(w.length(), shards);
        s.remaining = shards;
        for (int j = 0; j < shards; j++) {
            final int nic = (first + j) % domains.length;
            final long offset = Sharding.shardOffset(w.length(), shardSize, j);
            final long length = Sharding.shardLength(w.length(), shardSize, j);
            if (!post(s, shards - j, nic, src, w.srcOffset() + offset, length, w.dst(), w.dstOffset() + offset,
                w.imm().isPresent(), w.imm().orElse(0), -1)) {
                return;
            }
        }
    }

    private void postPaged(final Submission s, final PagedWrite w) {
        final int pages = w.pageCount();
        if (pages == 0) {
            finish(s);
            return;
        }
        final Region src = (Region) w.src();
        final int rangeSize = Sharding.rangeSize(pages, domains.length);
        final int first = nextNics(Sharding.rangeCount(pages, domains.length));
        s.remaining = pages;
        for (int k = 0; k < pages; k++) {
            final int nic = (first + k / rangeSize) % domains.length;
            if (!post(s, pages - k, nic, src, w.srcOffset() + w.srcStride() * w.srcPage(k), w.pageLength(), w.dst(),
                w.dstOffset() + w.dstStride() * w.dstPage(k), w.imm().isPresent(), w.imm().orElse(0), -1)) {
                return;
            }
        }
    }

    private void postImm(final Submission s, final ImmWrite w) {
        final int nic = w.routing() instanceof Routing.Pinned pinned ? pinned.nic() : nextNics(1);
        s.remaining = 1;
        post(s, 1, nic, null, 0, 0, w.dst(), 0, true, w.value(), -1);
    }

    private void postBarrier(final Submission s, final BarrierWrite w) {
        final List<MrDesc> dsts = w.dsts();
        final int count = dsts.size();
        final int rangeSize;
        final int first;
        if (w.routing() instanceof Routing.Pinned pinned) {
            rangeSize = count;
            first = pinned.nic();
        } else {
            rangeSize = Sharding.rangeSize(count, domains.length);
            first = nextNics(Sharding.rangeCount(count, domains.length));
        }
        s.remaining = count;
        for (int i = 0; i < count; i++) {
            final int nic = (first + i / rangeSize) % domains.length;
            if (!post(s, count - i, nic, null, 0, 0, dsts.get(i), 0, true, w.value(), peerHandle(w.group(), i, nic))) {
                return;
            }
        }
    }

    private void postScatter(final Submission s, final ScatterWrite w) {
        final Region src = (Region) w.src();
        final List<ScatterTarget> targets = w.targets();
        final int count = targets.size();
        final boolean hasImm = w.imm().isPresent();
        final int imm = w.imm().orElse(0);
        final int nics = domains.length;
        if (w.routing() instanceof GroupRouting.ShardBytes) {
            s.remaining = count * nics;
            for (int i = 0; i < count; i++) {
                final ScatterTarget t = targets.get(i);
                for (int nic = 0; nic < nics; nic++) {
                    final long offset = Sharding.byteSliceOffset(t.length(), nics, nic);
                    if (!post(s, (count - i) * nics - nic, nic, src, t.srcOffset() + offset,
                        Sharding.byteSliceLength(t.length(), nics, nic), t.dst(), t.dstOffset() + offset, hasImm, imm,
                        peerHandle(w.group(), i, nic))) {
                        return;
                    }
                }
            }
            return;
        }
        final int rangeSize = w.routing() instanceof GroupRouting.SingleNic ? count : Sharding.rangeSize(count, nics);
        final int first = w.routing() instanceof GroupRouting.SingleNic single ? single.nic() : 0;
        s.remaining = count;
        for (int i = 0; i < count; i++) {
            final ScatterTarget t = targets.get(i);
            final int nic = (first + i / rangeSize) % nics;
            if (!post(s, count - i, nic, src, t.srcOffset(), t.length(), t.dst(), t.dstOffset(), hasImm, imm,
                peerHandle(w.group(), i, nic))) {
                return;
            }
        }
    }

    private static long peerHandle(final PeerGroup group, final int peer, final int nic) {
        return group instanceof ResolvedPeerGroup resolved ? resolved.handle(peer, nic) : -1;
    }

    /**
     * Posts one write on {@code nic} to the same NIC index of the destination. {@code unposted} counts this write and
     * every later one of the request, so a failure here gives them all up at once.
     *
     * @return false when the request was abandoned
     */
    private boolean post(final Submission s, final int unposted, final int nic, final @Nullable Region src,
                         final long srcOffset, final long length, final MrDesc dst, final long dstOffset,
                         final boolean hasImm, final int imm, final long resolvedPeer) {
        try {
            final Domain domain = domains[nic];
            final MrDesc.Nic remote = dst.nic(nic);
            final long peer = resolvedPeer >= 0 ? resolvedPeer : domain.resolve(remote.address());
            postedNics[slotOf(s.token)] |= 1 << nic;
            domain.write(s.token, src == null ? MemorySegment.NULL : src.segment(), srcOffset,
                src == null ? 0 : src.key(nic), length, peer, dst.address(), dstOffset, remote.rkey(), hasImm, imm);
            return true;
        } catch (final TransferEngineException e) {
            abandon(s, unposted, e);
            return false;
        }
    }

    /** Gives up the writes not posted yet; the request fails and ends once the posted ones drained. */
    private void abandon(final Submission s, final int unposted, final TransferEngineException error) {
        fail(s, error);
        s.remaining -= unposted;
        if (s.remaining == 0) {
            release(slotOf(s.token));
        }
    }

    private int nextNics(final int count) {
        final int first = roundRobin;
        roundRobin = (roundRobin + count) % domains.length;
        return first;
    }

    private void ack(final long token, final @Nullable TransferEngineException error) {
        final int slot = slotOf(token);
        final Submission s = slot < slots.length ? slots[slot] : null;
        if (s == null || s.token != token) {
            return; // timed out or failed earlier; its late completions are dropped
        }
        if (error != null) {
            fail(s, error);
        }
        if (--s.remaining == 0) {
            if (!s.failed) {
                s.complete(null, callbacks, counters);
            }
            release(slot);
        }
    }

    private void finish(final Submission s) {
        s.complete(null, callbacks, counters);
        release(slotOf(s.token));
    }

    private void fail(final Submission s, final TransferEngineException error) {
        if (!s.failed) {
            s.failed = true;
            s.complete(error, callbacks, counters);
        }
    }

    private void release(final int slot) {
        final Submission s = slots[slot];
        slots[slot] = null;
        active--;
        freeSlots.pushInt(slot);
        releaseSendBuffer(s);
        pool.recycle(s);
    }

    private void releaseSendBuffer(final Submission s) {
        if (s.sendBuffer != null) {
            sendBuffers.release(s.sendBuffer);
        }
    }

    private int expireTimedOut(final long now) {
        int expired = 0;
        for (int slot = 0; slot < slotHighWater; slot++) {
            final Submission s = slots[slot];
            if (s != null && now - s.deadlineNanos > 0) {
                counters.increment(EngineCounter.REQUESTS_TIMED_OUT);
                fail(s, new TransferTimeoutException((s.isSend() ? "send to " + s.sendPeer : describe(s.request))
                    + " did not complete within " + config.operationTimeout() + " (" + s.remaining + " writes outstanding)"));
                for (int nics = postedNics[slot]; nics != 0; nics &= nics - 1) {
                    domains[Integer.numberOfTrailingZeros(nics)].cancel(s.token);
                }
                release(slot);
                expired++;
            }
        }
        return expired;
    }

    private static String describe(final @Nullable WriteRequest request) {
        return request == null ? "request" : request.getClass().getSimpleName();
    }

    private static int slotOf(final long token) {
        return (int) token;
    }

    private void closeDomains() {
        for (final Domain domain : domains) {
            if (domain != null) {
                try {
                    domain.close();
                } catch (final RuntimeException e) {
                    LOG.warn("closing {} failed", domain.description(), e);
                }
            }
        }
    }

    /** The events of one NIC, on the worker thread. */
    private final class NicEvents implements DomainListener {

        private final int nic;
        /** The imm {@link #admitsImm} last said yes to, credited by the next {@link #onImm}. */
        private int admittedImm;
        private boolean admitted;

        NicEvents(final int nic) {
            this.nic = nic;
        }

        @Override
        public boolean admitsImm(final int imm) {
            admitted = imms.admits(imm);
            admittedImm = imm;
            return admitted;
        }

        @Override
        public void onWriteComplete(final long token, final long bytes) {
            counters.add(index, nic, NicCounter.WRITES, 1);
            counters.add(index, nic, NicCounter.BYTES_WRITTEN, bytes);
            ack(token, null);
        }

        @Override
        public void onWriteFailed(final long token, final TransferEngineException error) {
            counters.add(index, nic, NicCounter.WRITE_ERRORS, 1);
            ack(token, error);
        }

        @Override
        public void onSendComplete(final long token, final long bytes) {
            counters.add(index, nic, NicCounter.SENDS, 1);
            counters.add(index, nic, NicCounter.BYTES_WRITTEN, bytes);
            ack(token, null);
        }

        @Override
        public void onSendFailed(final long token, final TransferEngineException error) {
            ack(token, error);
        }

        @Override
        public void onReceive(final long token, final int length) {
            counters.add(index, nic, NicCounter.RECEIVES, 1);
            counters.add(index, nic, NicCounter.BYTES_RECEIVED, length);
            final Receives pool = receivePools.get(Receives.poolId(token));
            if (pool != null) {
                pool.onReceive(Receives.bufferIndex(token), length);
            }
        }

        @Override
        public void onImm(final int imm) {
            counters.add(index, nic, NicCounter.IMMS, 1);
            imms.onImm(imm, admitted && admittedImm == imm);
            admitted = false;
        }

        @Override
        public void onBytesReceived(final long bytes) {
            counters.add(index, nic, NicCounter.BYTES_RECEIVED, bytes);
        }
    }
}
