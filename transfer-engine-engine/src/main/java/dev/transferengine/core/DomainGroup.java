package dev.transferengine.core;

import dev.transferengine.EngineConfig;
import dev.transferengine.EngineCounter;
import dev.transferengine.GroupSpec;
import dev.transferengine.NetworkAddress;
import dev.transferengine.NicCounter;
import dev.transferengine.PagedWrite;
import dev.transferengine.ReadRequest;
import dev.transferengine.StageProbe;
import dev.transferengine.TransferListener;
import dev.transferengine.TransferRequest;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.OperationCancelledException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.WorkerFailedException;
import dev.transferengine.nativeaccess.CpuAffinity;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.PageBatch;
import dev.transferengine.spi.WriteDescriptor;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.agrona.concurrent.Agent;
import org.jctools.queues.atomic.MpscAtomicArrayQueue;
import org.jctools.queues.atomic.MpscUnboundedAtomicArrayQueue;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One DomainGroup's worker, the agent of its duty cycle: takes the {@link GroupProxy}'s commands and submissions, has
 * the {@link WritePlanner} cut requests into per-NIC pieces ({@code plan}, then {@code next}; a paged write's pages in
 * batches per NIC, {@code nextPages}) and posts them, polls the
 * NICs and then handles what they reported from the {@link CompletionQueue}, and expires operations past their
 * timeout. How operations end is {@link Outcomes}' job (every request ends exactly once; a failed one with an imm is
 * told to its receivers by {@link ImmAbandonments}); the NICs' life, including the reopen after an {@link Error}
 * unless the {@link WorkerErrorPolicy} says the JVM is broken, is {@link GroupNics}'; what a reopen re-creates is
 * {@link GroupResources}'. An unexpected exception is counted and logged and the worker goes on.
 *
 * <p>Everything here runs on the worker thread except {@link #offer}, {@link #control} and the read-only views. The
 * worker never blocks. Time comes from the injected clock, read once per duty cycle, so tests drive timeouts by hand;
 * an operation's deadline is read from it by {@link #offer}, at its submission.
 */
final class DomainGroup implements Agent {

    private static final Logger LOG = LoggerFactory.getLogger(DomainGroup.class);
    private static final int CONTROL_DRAIN_LIMIT = 8;
    private static final int SUBMISSION_DRAIN_LIMIT = 64;
    /**
     * The most pages of a paged write handed to a NIC in one {@link Domain#writePages} call: enough that the per-call
     * cost vanishes beside the pages' and that a transport cutting a batch into frames (tcp: 252 pages of 1 KiB) is
     * rarely left with a short last one, small enough that the batch's offsets (64 KiB) stay in cache.
     */
    private static final int PAGE_BATCH = 4096;
    /**
     * How long closing polls the NICs after it posted negative acknowledgements, so that they leave; closing without
     * any waits for nothing.
     */
    private static final long CLOSE_FLUSH_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /**
     * How long closing goes on polling while a NIC says an acknowledgement has not left yet: a tcp peer may need a
     * connection and its TLS handshake first, which takes longer than {@link #CLOSE_FLUSH_NANOS} on a loaded host.
     */
    private static final long CLOSE_FLUSH_PENDING_NANOS = TimeUnit.SECONDS.toNanos(2);

    private static final long MIN_TIMEOUT_SCAN_NANOS = 1_000_000;
    private static final long MAX_TIMEOUT_SCAN_NANOS = 100_000_000;
    /** How often the worker looks for registered memory the application freed (every cycle for device memory). */
    private static final long SCOPE_SWEEP_NANOS = 1_000_000;

    private final int index;
    private final GroupSpec spec;
    private final WorkerServices services;
    private final ImmCountTable imms;
    private final Counters counters;
    private final Submissions pool;
    private final LongSupplier clock;
    private final MpscAtomicArrayQueue<Submission> submissions;
    private final MpscUnboundedAtomicArrayQueue<GroupProxy.Command<?>> controls =
            new MpscUnboundedAtomicArrayQueue<>(64);
    private final CompletableFuture<Void> started = new CompletableFuture<>();
    private final Domain[] domains;
    private final InFlightTable inFlight;
    /** Engine-allocated memory of deregistered regions, freed once nothing touches it. */
    private final AllocationDrains drains = new AllocationDrains();

    private final WritePlanner planner;
    /** What the planner fills and {@link #post} hands its domain; reused for every piece. */
    private final WriteDescriptor posted = new WriteDescriptor();
    /** What the planner fills with the pages of a paged write and {@link #postPages} hands their domain at once. */
    private final PageBatch pages = new PageBatch(PAGE_BATCH);
    /**
     * The peer address {@link #post} resolved last, on NIC {@link #resolvedNic}, and its handle: the pieces of one
     * request (the pages of a paged write) mostly share their destination, resolved once instead of once a piece.
     * Forgotten when the request's pieces are posted.
     */
    private @Nullable NetworkAddress resolvedAddress;

    private int resolvedNic;
    private long resolvedHandle;

    private final CompletionQueue completions = new CompletionQueue(1024);
    /** What a restart must re-create on the new NICs. */
    private final GroupResources resources;
    /** The commands other threads send this worker. */
    private final GroupProxy proxy;
    /** The NICs' life: open, close, down and reopened after an {@link Error}. */
    private final GroupNics nics;
    /** How the operations in flight end. */
    private final Outcomes outcomes;

    private final BackPressureException backPressure;
    private final ThrottledLog errors = new ThrottledLog(LOG);
    private final long timeoutNanos;
    private final long timeoutScanNanos;
    private long nextTimeoutScan;
    /** The clock, read once at the start of each duty cycle (nanoseconds). */
    private long now;

    private long nextScopeSweep;

    private volatile @Nullable Thread worker;
    private volatile boolean stopped;
    private final WakeableIdle idle;

    DomainGroup(final int index, final GroupSpec spec, final EngineConfig config, final WorkerServices services) {
        this.index = index;
        this.spec = spec;
        this.services = services;
        this.imms = services.imms();
        this.counters = services.counters();
        this.pool = services.pool();
        this.clock = services.clock();
        this.submissions = new MpscAtomicArrayQueue<>(config.submitQueueCapacity());
        this.domains = new Domain[spec.nics()];
        this.resources = new GroupResources(index, config.option(DeviceMemory.OPTION, DeviceMemory.DEFAULT), domains);
        this.inFlight = new InFlightTable(config.maxInFlight());
        this.idle = new WakeableIdle(
                config.idleStrategy(),
                () -> !submissions.isEmpty() || !controls.isEmpty() || resources.receivesPending(),
                () -> inFlight.active() > 0);
        this.proxy = new GroupProxy(this);
        this.nics = new GroupNics(index, config, services, domains, completions, errors);
        this.outcomes = new Outcomes(
                inFlight,
                services,
                nics,
                domains,
                new ImmAbandonments(index, domains, counters, errors),
                config.operationTimeout());
        this.planner = new WritePlanner(spec.nics());
        this.backPressure = new BackPressureException("the submission queue of group " + index + " is full ("
                + config.submitQueueCapacity() + " entries); retry later or raise submitQueueCapacity");
        this.timeoutNanos = config.operationTimeout().toNanos();
        // a timeout fires at most 1/64 of itself late, and a 30 s timeout costs one scan every 100 ms
        this.timeoutScanNanos = Math.clamp(timeoutNanos / 64, MIN_TIMEOUT_SCAN_NANOS, MAX_TIMEOUT_SCAN_NANOS);
    }

    // ---- any thread -------------------------------------------------------------------------------------------

    int index() {
        return index;
    }

    /** What this worker shares with the engine's other workers. */
    WorkerServices services() {
        return services;
    }

    /** The commands other threads send this worker, one method each. Any thread. */
    GroupProxy proxy() {
        return proxy;
    }

    /** Worker thread: the region of {@code owned} was deregistered; its memory drains before it is freed. */
    void drainBeforeFree(final EngineAllocation owned) {
        drains.add(owned, inFlight);
    }

    /** Its regions, peer groups and receive pools: what a restart re-creates. Worker thread only. */
    GroupResources resources() {
        return resources;
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

    /** The worker's thread, once started. */
    Thread worker() {
        return Objects.requireNonNull(worker, "the worker has not started");
    }

    boolean isStopped() {
        return stopped;
    }

    /** Why the group is down (its worker failed and its NICs are being reopened), or null while it serves. */
    @Nullable String failure() {
        return nics.failure();
    }

    /** The exception a full submission queue answers with; one instance, since it is stackless. */
    BackPressureException backPressure() {
        return backPressure;
    }

    /** Queues a submission; false when the bounded queue is full. */
    boolean offer(final Submission submission) {
        // the deadline counts from the submission, on the caller's thread: a worker that takes it late (a loaded
        // host, a manual clock moved meanwhile) must not move it
        submission.deadlineNanos = clock.getAsLong() + timeoutNanos;
        if (!submissions.offer(submission)) {
            return false;
        }
        idle.wake();
        return true;
    }

    /** Queues a command of the {@link GroupProxy} for the worker (registration, peer resolution, receive pools...). */
    void control(final GroupProxy.Command<?> command) {
        controls.offer(command);
        idle.wake();
    }

    /** How this group's worker idles; {@link #offer} and {@link #control} wake it. */
    WakeableIdle idle() {
        return idle;
    }

    // ---- worker thread: the duty cycle ------------------------------------------------------------------------

    @Override
    public void onStart() {
        worker = Thread.currentThread();
        CpuAffinity.pinCurrentThread(spec.workerCpu(), "worker of group " + index);
        try {
            nics.open();
            started.complete(null);
        } catch (final RuntimeException e) {
            closeNics();
            started.completeExceptionally(e);
            throw e;
        }
    }

    @Override
    public int doWork() {
        now = clock.getAsLong();
        try {
            return nics.isOpen() ? duty() : reopen();
        } catch (final RuntimeException e) {
            counters.increment(EngineCounter.WORKER_ERRORS);
            errors.error("group " + index + ": unexpected engine error; the worker continues", e);
            return 1;
        } catch (final Error e) {
            fallDown(e);
            return 1;
        }
    }

    private int duty() {
        int work = drainControls();
        work += imms.tick(now);
        work += drainSubmissions();
        work += drainCompletions(); // what posts reported at once
        if (now - nextScopeSweep >= 0 || resources.watchesDeviceMemory()) {
            nextScopeSweep = now + SCOPE_SWEEP_NANOS;
            work += resources.deregisterFreed(counters, errors);
        }
        for (final Domain domain : domains) {
            work += domain.poll();
            work += drainCompletions();
        }
        if (!drains.isEmpty()) {
            work += drains.serve(domains, inFlight);
        }
        if (inFlight.active() > 0 && now - nextTimeoutScan >= 0) {
            nextTimeoutScan = now + timeoutScanNanos;
            work += outcomes.expire(now);
        }
        return work;
    }

    @Override
    public void onClose() {
        stopped = true;
        GroupProxy.Command<?> command;
        while ((command = controls.poll()) != null) {
            try {
                command.run(this);
            } catch (final RuntimeException e) {
                LOG.warn("control action failed while closing group {}", index, e);
            }
        }
        if (nics.isOpen()) {
            drainCompletions(); // what ended before the close counts as ended
        }
        final EngineClosedException closed = new EngineClosedException("engine closed while the operation was pending");
        final long abandonedBefore = counters.counter(EngineCounter.IMMS_ABANDONED_SENT);
        outcomes.failAll(closed);
        failQueued(closed);
        // acknowledgements of operations that failed just before the close may still wait for a connection too
        if (nics.isOpen()
                && (counters.counter(EngineCounter.IMMS_ABANDONED_SENT) != abandonedBefore || abandonmentsPending())) {
            flushControl();
        }
        closeNics(); // receive buffers are freed by the engine once every worker stopped
        drains.completeAll(); // closed NICs touch nothing; the engine frees what it allocated
    }

    /** Fails submissions still queued; also called by the engine after the worker stopped, for late arrivals. */
    void failQueued(final TransferEngineException error) {
        Submission s;
        while ((s = submissions.poll()) != null) {
            outcomes.failUnstarted(s, error);
            pool.recycle(s);
        }
    }

    @Override
    public String roleName() {
        return "te-worker-" + index;
    }

    private int drainControls() {
        int work = 0;
        GroupProxy.Command<?> command;
        while (work < CONTROL_DRAIN_LIMIT && (command = controls.poll()) != null) {
            try {
                command.run(this);
            } catch (final RuntimeException e) {
                counters.increment(EngineCounter.WORKER_ERRORS);
                errors.warn("control action failed on group " + index, e);
            }
            work++;
        }
        return work + resources.serveReceivePools();
    }

    private int drainSubmissions() {
        int work = 0;
        while (work < SUBMISSION_DRAIN_LIMIT && inFlight.hasRoom()) {
            // relaxed: an empty queue answers from its slot alone, without reading the producers' index, which a
            // worker polling every cycle would otherwise pull into its cache each time, so that every submit's CAS of
            // it waited for the line to come back; a submission caught half-offered is taken at the next cycle
            final Submission s = submissions.relaxedPoll();
            if (s == null) {
                break;
            }
            try {
                start(s);
            } catch (final RuntimeException e) {
                counters.increment(EngineCounter.WORKER_ERRORS);
                errors.error("starting " + Outcomes.describe(s) + " failed unexpectedly", e);
                if (inFlight.get(s.token) == s) { // not ended before the failure
                    outcomes.abandon(
                            s,
                            s.remaining,
                            new TransferEngineException("internal error starting the request: " + e, e));
                }
            }
            work++;
        }
        return work;
    }

    private void start(final Submission s) {
        final boolean timed = counters.stageProbe() != null;
        if (timed) {
            s.takenNanos = System.nanoTime();
        }
        inFlight.add(s, s.deadlineNanos);
        if (s.isCancelled()) {
            s.remaining = 0;
            outcomes.fail(s, new OperationCancelledException(Outcomes.describe(s) + " cancelled before it was posted"));
            outcomes.release(s);
            return;
        }
        final TransferRequest request = s.request;
        if (request == null) {
            s.remaining = 1;
            if (timed) {
                s.postedNanos = System.nanoTime(); // the send is posted next; its completion may come at once
            }
            postSend(s);
            return;
        }
        s.remaining = planner.plan(request);
        if (s.remaining == 0) {
            outcomes.end(s);
            return;
        }
        posted.token(s.token);
        try {
            if (request instanceof PagedWrite w) {
                for (int nic = planner.nextPages(w, pages); nic >= 0 && postPages(s, nic); ) {
                    nic = planner.nextPages(w, pages);
                }
            } else {
                for (int nic = planner.next(posted); nic >= 0 && post(s, nic); nic = planner.next(posted)) {
                    // every piece is posted in order, until one is abandoned
                }
            }
        } finally {
            planner.clear();
            posted.clear();
            pages.clear();
            resolvedAddress = null;
        }
    }

    private void postSend(final Submission s) {
        try {
            final Domain domain = domains[0];
            final long peer = domain.resolve(Objects.requireNonNull(s.sendPeer));
            inFlight.posted(s.token, 0);
            domain.send(s.token, peer, Objects.requireNonNull(s.sendBuffer));
        } catch (final TransferEngineException e) {
            outcomes.abandon(s, 1, e);
        }
    }

    /** Posts the piece the planner filled into {@link #posted} on NIC {@code nic}; false once abandoned. */
    private boolean post(final Submission s, final int nic) {
        try {
            final Domain domain = domains[nic];
            if (posted.peer() < 0) {
                posted.target(peerHandle(domain, nic), posted.remoteBase(), posted.remoteOffset(), posted.rkey());
            }
            inFlight.posted(s.token, nic);
            if (s.takenNanos != 0) {
                s.postedNanos = System.nanoTime(); // before the post: a transport may report the completion inside it
            }
            if (s.request instanceof ReadRequest) {
                domain.read(posted);
            } else {
                domain.write(posted);
            }
            return true;
        } catch (final TransferEngineException e) {
            outcomes.abandon(s, planner.unposted(), e);
            return false;
        }
    }

    /**
     * Posts the pages the planner filled into {@link #pages} on NIC {@code nic} in one call; false once abandoned (the
     * batch's pages count as unposted, since a domain that threw reported none of them).
     */
    private boolean postPages(final Submission s, final int nic) {
        try {
            final Domain domain = domains[nic];
            pages.token(s.token).target(peerHandle(domain, nic), pages.remoteBase(), pages.rkey());
            inFlight.posted(s.token, nic);
            if (s.takenNanos != 0) {
                s.postedNanos = System.nanoTime(); // before the post: a transport may report the completion inside it
            }
            domain.writePages(pages);
            return true;
        } catch (final TransferEngineException e) {
            outcomes.abandon(s, planner.unposted(), e);
            return false;
        }
    }

    /**
     * The handle of the destination of the piece the planner handed out last, on NIC {@code nic}; resolved once for
     * the pieces of a request that share it. The address is compared by identity: the pieces of a request hand out
     * their descriptor's own object, and a cheap miss only resolves again.
     */
    @SuppressWarnings("ReferenceEquality")
    private long peerHandle(final Domain domain, final int nic) {
        final NetworkAddress address = planner.destination(nic);
        if (address != resolvedAddress || nic != resolvedNic) {
            resolvedHandle = domain.resolve(address);
            resolvedAddress = address;
            resolvedNic = nic;
        }
        return resolvedHandle;
    }

    // ---- worker thread: completions -----------------------------------------------------------------------------

    private int drainCompletions() {
        int handled = 0;
        for (int i = completions.take(); i >= 0; i = completions.take()) {
            handle(i);
            handled++;
        }
        return handled;
    }

    private void handle(final int i) {
        final int nic = completions.nic(i);
        final long value = completions.value(i);
        switch (completions.kind(i)) {
            case CompletionQueue.COMPLETE -> {
                final long token = completions.token(i);
                final boolean send = InFlightTable.isSend(token);
                final boolean read = !send && isRead(token);
                final int pieces = completions.count(i);
                counters.add(index, nic, send ? NicCounter.SENDS : read ? NicCounter.READS : NicCounter.WRITES, pieces);
                counters.add(index, nic, read ? NicCounter.BYTES_READ : NicCounter.BYTES_WRITTEN, value);
                outcomes.ack(token, pieces, null);
            }
            case CompletionQueue.FAILED -> {
                final long token = completions.token(i);
                final int pieces = completions.count(i);
                if (!InFlightTable.isSend(token)) {
                    counters.add(index, nic, isRead(token) ? NicCounter.READ_ERRORS : NicCounter.WRITE_ERRORS, pieces);
                }
                outcomes.ack(token, pieces, completions.takeError(i));
            }
            case CompletionQueue.RECEIVE -> {
                counters.add(index, nic, NicCounter.RECEIVES, 1);
                counters.add(index, nic, NicCounter.BYTES_RECEIVED, value);
                final long token = completions.token(i);
                final Receives receives = resources.receivePool(Receives.poolId(token));
                if (receives != null) {
                    receives.onReceive(Receives.bufferIndex(token), (int) value);
                }
            }
            case CompletionQueue.RECEIVE_WITHDRAWN -> {
                final long token = completions.token(i);
                final Receives receives = resources.receivePool(Receives.poolId(token));
                if (receives != null) {
                    receives.onWithdrawn(Receives.bufferIndex(token));
                }
            }
            case CompletionQueue.IMM -> {
                final int count = completions.count(i);
                counters.add(index, nic, NicCounter.IMMS, count);
                final StageProbe probe = counters.stageProbe();
                if (probe != null) {
                    final long arrived = System.nanoTime();
                    for (int k = 0; k < count; k++) {
                        try {
                            probe.onImmArrived((int) value, arrived);
                        } catch (final RuntimeException e) { // a probe bug must not lose the imm
                            counters.increment(EngineCounter.CALLBACK_ERRORS);
                        }
                    }
                }
                imms.consume(value, count);
            }
            default -> throw new IllegalStateException("unknown completion kind " + completions.kind(i));
        }
    }

    /**
     * Drops what the NICs reported but was not handled, since those operations are being failed wholesale; the imms
     * among them are credited all the same, as their writes landed and their reservations must end.
     */
    private void dropCompletions() {
        for (int i = completions.take(); i >= 0; i = completions.take()) {
            if (completions.kind(i) == CompletionQueue.IMM) {
                imms.consume(completions.value(i), completions.count(i));
            } else {
                completions.takeError(i);
            }
        }
    }

    /** Whether {@code token} is a live read's, for the NIC counters; a stale token counts as a write. */
    private boolean isRead(final long token) {
        final Submission s = inFlight.get(token);
        return s != null && s.request instanceof ReadRequest;
    }

    // ---- worker thread: failure and restart -------------------------------------------------------------------

    /**
     * Cancels the operation submitted with {@code listener} if it is in flight here; one still queued is caught by
     * {@link #start}.
     */
    void cancel(final TransferListener listener) {
        outcomes.cancel(listener);
    }

    /** The worker hit an {@link Error}: fails what is in flight and closes the NICs; {@link #reopen()} reopens them. */
    private void fallDown(final Error cause) {
        final WorkerFailedException error = nics.fallDown(cause, now);
        dropCompletions();
        outcomes.failAll(error);
        closeNics();
    }

    /** While down: refuses new submissions, and reopens the NICs with their regions, peers and receive buffers. */
    private int reopen() {
        final WorkerFailedException error = nics.downError();
        if (error != null) {
            failQueued(error);
        }
        if (!nics.reopenDue(now)) {
            return 0;
        }
        closeNics(); // what an earlier attempt opened
        nics.open();
        resources.recreate();
        nics.up();
        LOG.warn("group {}: NICs reopened after the worker failed; regions of this group have new keys", index);
        return 1;
    }

    /**
     * Polls the NICs for {@link #CLOSE_FLUSH_NANOS} of real time (the engine's clock may be a test's manual one), and
     * up to {@link #CLOSE_FLUSH_PENDING_NANOS} while one says an acknowledgement has not left yet, so that negative
     * acknowledgements posted while closing, or shortly before and still on their way, leave before the NICs close; a
     * bounded wait on close only.
     */
    private void flushControl() {
        final long start = System.nanoTime();
        long elapsed = 0;
        while (elapsed < CLOSE_FLUSH_NANOS || (elapsed < CLOSE_FLUSH_PENDING_NANOS && abandonmentsPending())) {
            for (final Domain domain : domains) {
                try {
                    domain.poll();
                    drainCompletions();
                } catch (final RuntimeException e) {
                    errors.warn("polling " + domain.description() + " while closing failed", e);
                }
            }
            elapsed = System.nanoTime() - start;
        }
    }

    private boolean abandonmentsPending() {
        for (final Domain domain : domains) {
            if (domain.abandonmentsPending()) {
                return true;
            }
        }
        return false;
    }

    private void closeNics() {
        nics.close();
        dropCompletions(); // closing reports the failure of what was posted; those operations ended already
    }
}
