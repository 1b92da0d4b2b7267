package dev.transferengine.core;

import dev.transferengine.BarrierWrite;
import dev.transferengine.EngineConfig;
import dev.transferengine.EngineCounter;
import dev.transferengine.GroupRouting;
import dev.transferengine.GroupSpec;
import dev.transferengine.ImmWrite;
import dev.transferengine.NetworkAddress;
import dev.transferengine.NicCounter;
import dev.transferengine.PagedWrite;
import dev.transferengine.ReadRequest;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.Routing;
import dev.transferengine.ScatterTarget;
import dev.transferengine.ScatterWrite;
import dev.transferengine.SingleWrite;
import dev.transferengine.StageProbe;
import dev.transferengine.TransferListener;
import dev.transferengine.TransferRequest;
import dev.transferengine.WriteRequest;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.OperationCancelledException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;
import dev.transferengine.exceptions.WorkerFailedException;
import dev.transferengine.nativeaccess.CpuAffinity;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.Transport;
import dev.transferengine.spi.WriteDescriptor;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

import org.agrona.concurrent.Agent;
import org.jctools.queues.atomic.MpscAtomicArrayQueue;
import org.jctools.queues.atomic.MpscUnboundedAtomicArrayQueue;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One DomainGroup's worker, the agent of its duty cycle: takes control actions and submissions, has the
 * {@link WritePlanner} cut requests into per-NIC pieces, polls the NICs and then handles what they reported from the
 * {@link CompletionQueue}, and expires operations past their timeout in the {@link InFlightTable}. Every request ends
 * exactly once. An unexpected exception is counted and logged and the worker goes on; an {@link Error} (out of
 * memory, say) fails what is in flight, marks the group down and reopens its NICs, unless the
 * {@link WorkerErrorPolicy} says the JVM is broken: the group then stays down and fails every later request at once.
 *
 * <p>Everything here runs on the worker thread except {@link #offer}, {@link #control}, {@link #call} and the
 * read-only views. The worker never blocks. Time comes from the injected clock, so tests drive timeouts by hand.
 */
final class DomainGroup implements Agent {

    private static final Logger LOG = LoggerFactory.getLogger(DomainGroup.class);
    private static final int CONTROL_DRAIN_LIMIT = 8;
    private static final int SUBMISSION_DRAIN_LIMIT = 64;
    /**
     * How long closing polls the NICs after it posted negative acknowledgements, so that they leave (a tcp peer may
     * need a connection and its handshake first); closing without any waits for nothing.
     */
    private static final long CLOSE_FLUSH_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final long MIN_TIMEOUT_SCAN_NANOS = 1_000_000;
    private static final long MAX_TIMEOUT_SCAN_NANOS = 100_000_000;
    /** How often the worker looks for registered memory the application freed. */
    private static final long SCOPE_SWEEP_NANOS = 1_000_000;

    private static final long REOPEN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final int index;
    private final GroupSpec spec;
    private final EngineConfig config;
    private final WorkerServices services;
    private final Transport transport;
    private final ImmCountTable imms;
    private final CallbackDispatcher callbacks;
    private final Counters counters;
    private final SendBuffers sendBuffers;
    private final Submissions pool;
    private final LongSupplier clock;
    private final MpscAtomicArrayQueue<Submission> submissions;
    private final MpscUnboundedAtomicArrayQueue<Consumer<DomainGroup>> controls =
            new MpscUnboundedAtomicArrayQueue<>(64);
    private final CompletableFuture<Void> started = new CompletableFuture<>();
    private final Domain[] domains;
    private final InFlightTable inFlight;
    private final WritePlanner planner;
    /** What the planner fills and {@link #post} hands its domain; reused for every piece. */
    private final WriteDescriptor posted = new WriteDescriptor();

    private final CompletionQueue completions = new CompletionQueue(1024);
    /** What a restart must re-create on the new NICs. */
    private final GroupResources resources;
    /** The commands other threads send this worker. */
    private final GroupProxy proxy;

    private final BackPressureException backPressure;
    private final ThrottledLog errors = new ThrottledLog(LOG);
    private final long timeoutNanos;
    private final long timeoutScanNanos;
    private long nextTimeoutScan;
    /** The clock, read once at the start of each duty cycle (nanoseconds). */
    private long now;

    private long nextScopeSweep;

    private boolean nicsOpen;
    /** Down for good: the {@link WorkerErrorPolicy} forbade reopening the NICs. */
    private boolean downForGood;

    private long nextReopen;
    private @Nullable WorkerFailedException downError;
    private volatile @Nullable String failure;
    private volatile @Nullable Thread worker;
    private volatile boolean stopped;
    private final WakeableIdle idle;

    DomainGroup(final int index, final GroupSpec spec, final EngineConfig config, final WorkerServices services) {
        this.index = index;
        this.spec = spec;
        this.config = config;
        this.services = services;
        this.transport = services.transport();
        this.imms = services.imms();
        this.callbacks = services.callbacks();
        this.counters = services.counters();
        this.sendBuffers = services.sendBuffers();
        this.pool = services.pool();
        this.clock = services.clock();
        this.submissions = new MpscAtomicArrayQueue<>(config.submitQueueCapacity());
        this.idle = new WakeableIdle(config.idleStrategy(), () -> !submissions.isEmpty() || !controls.isEmpty());
        this.domains = new Domain[spec.nics()];
        this.resources = new GroupResources(index, domains);
        this.proxy = new GroupProxy(this);
        this.inFlight = new InFlightTable(config.maxInFlight());
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
        return failure;
    }

    /** The exception a full submission queue answers with; one instance, since it is stackless. */
    BackPressureException backPressure() {
        return backPressure;
    }

    /** Queues a submission; false when the bounded queue is full. */
    boolean offer(final Submission submission) {
        if (!submissions.offer(submission)) {
            return false;
        }
        idle.wake();
        return true;
    }

    /** Queues a control action for the worker (registration, peer resolution, receive posting...). */
    void control(final Consumer<DomainGroup> action) {
        controls.offer(action);
        idle.wake();
    }

    /** How this group's worker idles; {@link #offer} and {@link #control} wake it. */
    WakeableIdle idle() {
        return idle;
    }

    /** Runs {@code action} on the worker and returns its result to the caller's future. */
    <T> CompletableFuture<T> call(final Function<DomainGroup, T> action) {
        final CompletableFuture<T> result = new CompletableFuture<>();
        control(g -> {
            try {
                result.complete(action.apply(g));
            } catch (final RuntimeException e) {
                result.completeExceptionally(e);
            } catch (final Error e) {
                result.completeExceptionally(e);
                throw e;
            }
        });
        return result;
    }

    /** {@link #call} for an action with no result: the future completes with true once it ran. */
    CompletableFuture<Boolean> run(final Consumer<DomainGroup> action) {
        return call(g -> {
            action.accept(g);
            return Boolean.TRUE;
        });
    }

    // ---- worker thread: the duty cycle ------------------------------------------------------------------------

    @Override
    public void onStart() {
        worker = Thread.currentThread();
        CpuAffinity.pinCurrentThread(spec.workerCpu(), "worker of group " + index);
        try {
            openDomains();
            started.complete(null);
        } catch (final RuntimeException e) {
            closeDomains();
            started.completeExceptionally(e);
            throw e;
        }
    }

    @Override
    public int doWork() {
        now = clock.getAsLong();
        try {
            return nicsOpen ? duty() : reopen();
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
        if (now - nextScopeSweep >= 0) {
            nextScopeSweep = now + SCOPE_SWEEP_NANOS;
            work += resources.deregisterFreed(counters, errors);
        }
        work += drainSubmissions();
        work += drainCompletions(); // what posts reported at once
        for (final Domain domain : domains) {
            work += domain.poll();
            work += drainCompletions();
        }
        if (inFlight.active() > 0 && now - nextTimeoutScan >= 0) {
            nextTimeoutScan = now + timeoutScanNanos;
            work += expireTimedOut();
        }
        return work;
    }

    @Override
    public void onClose() {
        stopped = true;
        Consumer<DomainGroup> action;
        while ((action = controls.poll()) != null) {
            try {
                action.accept(this);
            } catch (final RuntimeException e) {
                LOG.warn("control action failed while closing group {}", index, e);
            }
        }
        if (nicsOpen) {
            drainCompletions(); // what ended before the close counts as ended
        }
        final EngineClosedException closed = new EngineClosedException("engine closed while the operation was pending");
        final long abandonedBefore = counters.counter(EngineCounter.IMMS_ABANDONED_SENT);
        failInFlight(closed);
        failQueued(closed);
        if (nicsOpen && counters.counter(EngineCounter.IMMS_ABANDONED_SENT) != abandonedBefore) {
            flushControl();
        }
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

    private int drainControls() {
        int work = 0;
        Consumer<DomainGroup> action;
        while (work < CONTROL_DRAIN_LIMIT && (action = controls.poll()) != null) {
            try {
                action.accept(this);
            } catch (final RuntimeException e) {
                counters.increment(EngineCounter.WORKER_ERRORS);
                errors.warn("control action failed on group " + index, e);
            }
            work++;
        }
        return work;
    }

    private int drainSubmissions() {
        int work = 0;
        while (work < SUBMISSION_DRAIN_LIMIT && inFlight.hasRoom()) {
            final Submission s = submissions.poll();
            if (s == null) {
                break;
            }
            try {
                start(s);
            } catch (final RuntimeException e) {
                counters.increment(EngineCounter.WORKER_ERRORS);
                errors.error("starting " + describe(s.request) + " failed unexpectedly", e);
                if (inFlight.get(s.token) == s) { // not ended before the failure
                    abandon(
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
        inFlight.add(s, now + timeoutNanos);
        if (s.isCancelled()) {
            s.remaining = 0;
            fail(
                    s,
                    new OperationCancelledException((s.isSend() ? "send to " + s.sendPeer : describe(s.request))
                            + " cancelled before it was posted"));
            release(s);
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
            end(s);
            return;
        }
        posted.token(s.token);
        try {
            for (int nic = planner.next(posted); nic >= 0 && post(s, nic); nic = planner.next(posted)) {
                // every piece is posted in order, until one is abandoned
            }
        } finally {
            planner.clear();
            posted.clear();
        }
    }

    private void postSend(final Submission s) {
        try {
            final Domain domain = domains[0];
            final long peer = domain.resolve(Objects.requireNonNull(s.sendPeer));
            inFlight.posted(s.token, 0);
            domain.send(s.token, peer, Objects.requireNonNull(s.sendBuffer));
        } catch (final TransferEngineException e) {
            abandon(s, 1, e);
        }
    }

    /** Posts the piece the planner filled into {@link #posted} on NIC {@code nic}; false once abandoned. */
    private boolean post(final Submission s, final int nic) {
        try {
            final Domain domain = domains[nic];
            if (posted.peer() < 0) {
                posted.target(
                        domain.resolve(planner.destination(nic)),
                        posted.remoteBase(),
                        posted.remoteOffset(),
                        posted.rkey());
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
            abandon(s, planner.unposted(), e);
            return false;
        }
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
                counters.add(index, nic, send ? NicCounter.SENDS : read ? NicCounter.READS : NicCounter.WRITES, 1);
                counters.add(index, nic, read ? NicCounter.BYTES_READ : NicCounter.BYTES_WRITTEN, value);
                ack(token, null);
            }
            case CompletionQueue.FAILED -> {
                final long token = completions.token(i);
                if (!InFlightTable.isSend(token)) {
                    counters.add(index, nic, isRead(token) ? NicCounter.READ_ERRORS : NicCounter.WRITE_ERRORS, 1);
                }
                ack(token, completions.takeError(i));
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
            case CompletionQueue.IMM -> {
                counters.add(index, nic, NicCounter.IMMS, 1);
                final StageProbe probe = counters.stageProbe();
                if (probe != null) {
                    try {
                        probe.onImmArrived((int) value, System.nanoTime());
                    } catch (final RuntimeException e) { // a probe bug must not lose the imm
                        counters.increment(EngineCounter.CALLBACK_ERRORS);
                    }
                }
                imms.consume(value);
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
                imms.consume(completions.value(i));
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

    /** One piece of operation {@code token} ended; a stale token (the operation ended already) is ignored. */
    private void ack(final long token, final @Nullable TransferEngineException error) {
        final Submission s = inFlight.get(token);
        if (s == null) {
            return;
        }
        if (error != null) {
            fail(s, error);
        } else {
            s.confirmed++;
        }
        if (--s.remaining == 0) {
            end(s);
        }
    }

    /** Gives up the pieces not posted yet; the request fails and ends once the posted ones drained. */
    private void abandon(final Submission s, final int unposted, final TransferEngineException error) {
        fail(s, error);
        s.remaining -= unposted;
        if (s.remaining <= 0) {
            release(s);
        }
    }

    /** Every piece ended: reports success unless a piece failed (already reported), and frees the slot. */
    private void end(final Submission s) {
        if (!s.failed) {
            s.complete(null, callbacks, counters);
        }
        release(s);
    }

    /** Reports the request's first failure; later ones are dropped. */
    private void fail(final Submission s, final TransferEngineException error) {
        if (!s.failed) {
            s.failed = true;
            abandonImms(s, error);
            s.complete(error, callbacks, counters);
        }
    }

    /**
     * The request failed: where it carries an imm, tells each receiver how many of its imm events will not come (a
     * negative acknowledgement over NIC 0), so the receiver's expectation ends now instead of at its own timeout.
     * Only while the NICs are open; a failure path, so it may allocate.
     */
    private void abandonImms(final Submission s, final TransferEngineException error) {
        if (!(s.request instanceof WriteRequest request) || !nicsOpen) {
            return; // a send or a read carries no imm
        }
        final String cause = String.valueOf(error.getMessage());
        switch (request) {
            case SingleWrite w ->
                w.imm()
                        .ifPresent(imm -> abandonImm(
                                w.dst(),
                                imm,
                                (w.routing() instanceof Routing.Sharded sharded ? sharded.shards() : 1) - s.confirmed,
                                cause));
            case PagedWrite w -> w.imm().ifPresent(imm -> abandonImm(w.dst(), imm, w.pageCount() - s.confirmed, cause));
            case ImmWrite w -> abandonImm(w.dst(), w.value(), 1 - s.confirmed, cause);
            case BarrierWrite w -> abandonEach(w.dsts(), w.value(), 1, cause);
            case ScatterWrite w -> {
                if (w.imm().isPresent()) {
                    final List<RegionDescriptor> dsts =
                            new ArrayList<>(w.targets().size());
                    for (final ScatterTarget target : w.targets()) {
                        dsts.add(target.dst());
                    }
                    final int perTarget = w.routing() instanceof GroupRouting.ShardBytes ? domains.length : 1;
                    abandonEach(dsts, w.imm().getAsInt(), perTarget, cause);
                }
            }
        }
    }

    /** One acknowledgement per receiving peer, counting every event of the request to it (some may have landed). */
    private void abandonEach(
            final List<RegionDescriptor> dsts, final int imm, final int perDestination, final String cause) {
        final Map<NetworkAddress, RegionDescriptor> byPeer = new LinkedHashMap<>();
        final Map<NetworkAddress, Integer> events = new HashMap<>();
        for (final RegionDescriptor dst : dsts) {
            final NetworkAddress peer = dst.nic(0).address();
            byPeer.putIfAbsent(peer, dst);
            events.merge(peer, perDestination, Integer::sum);
        }
        byPeer.forEach((peer, dst) -> abandonImm(dst, imm, events.getOrDefault(peer, perDestination), cause));
    }

    private void abandonImm(final RegionDescriptor dst, final int imm, final int missing, final String cause) {
        if (missing <= 0) {
            return;
        }
        final Domain domain = domains[0];
        try {
            domain.abandonImm(domain.resolve(dst.nic(0).address()), imm, missing, cause);
            counters.increment(EngineCounter.IMMS_ABANDONED_SENT);
        } catch (final RuntimeException e) { // the request's own failure is reported either way
            errors.warn(
                    "group " + index + ": telling " + dst.nic(0).address() + " that imm " + imm
                            + " was abandoned failed",
                    e);
        }
    }

    private void release(final Submission s) {
        inFlight.remove(s.token);
        releaseSendBuffer(s);
        pool.recycle(s);
    }

    private void releaseSendBuffer(final Submission s) {
        if (s.sendBuffer != null) {
            sendBuffers.release(s.sendBuffer);
        }
    }

    private int expireTimedOut() {
        int expired = 0;
        for (Submission s = inFlight.nextExpired(0, now); s != null; ) {
            final long token = s.token;
            counters.increment(EngineCounter.REQUESTS_TIMED_OUT);
            fail(
                    s,
                    new TransferTimeoutException(
                            (s.isSend() ? "send to " + s.sendPeer : describe(s.request)) + " did not complete within "
                                    + config.operationTimeout() + " (" + s.remaining + " writes outstanding)"));
            for (int nics = inFlight.postedNics(token); nics != 0; nics &= nics - 1) {
                domains[Integer.numberOfTrailingZeros(nics)].cancel(token);
            }
            release(s);
            expired++;
            s = inFlight.nextExpired((int) token + 1, now);
        }
        return expired;
    }

    /**
     * Worker thread: cancels the operation submitted with {@code listener} if it is in flight here: its queued pieces
     * are withdrawn as for a timeout and it ends as cancelled now; one still queued is caught by {@link #start}.
     */
    void cancel(final TransferListener listener) {
        for (Submission s = inFlight.nextLive(0); s != null; s = inFlight.nextLive((int) s.token + 1)) {
            if (s.hasListener(listener)) {
                final long token = s.token;
                fail(
                        s,
                        new OperationCancelledException((s.isSend() ? "send to " + s.sendPeer : describe(s.request))
                                + " cancelled after it was posted (" + s.remaining + " pieces outstanding)"));
                for (int nics = inFlight.postedNics(token); nics != 0; nics &= nics - 1) {
                    domains[Integer.numberOfTrailingZeros(nics)].cancel(token);
                }
                release(s);
                return;
            }
        }
    }

    /** Fails and frees every operation in flight. */
    private void failInFlight(final TransferEngineException error) {
        for (Submission s = inFlight.nextLive(0); s != null; ) {
            final int slot = (int) s.token;
            fail(s, error);
            release(s);
            s = inFlight.nextLive(slot + 1);
        }
    }

    private static String describe(final @Nullable TransferRequest request) {
        return request == null ? "request" : request.getClass().getSimpleName();
    }

    // ---- worker thread: failure and restart -------------------------------------------------------------------

    /**
     * The worker hit an {@link Error}: the NICs' state cannot be trusted any more. Fails what is in flight with a
     * {@link WorkerFailedException}, closes the NICs and marks the group down; {@link #reopen()} brings it back.
     */
    private void fallDown(final Error cause) {
        nicsOpen = false;
        downForGood = !WorkerErrorPolicy.mayReopen(cause);
        failure = downForGood
                ? "worker failed for good, its NICs stay closed: " + cause
                : "worker failed, reopening its NICs: " + cause;
        counters.increment(EngineCounter.WORKER_RESTARTS);
        errors.error("group " + index + ": worker failed; its in-flight operations fail and its NICs reopen", cause);
        final WorkerFailedException error = new WorkerFailedException(
                "the worker of group " + index + " failed (" + cause + ") while the operation was in flight; "
                        + (downForGood ? "the group stays down until the engine is closed" : "its NICs were reopened"),
                cause);
        downError = error;
        dropCompletions();
        failInFlight(error);
        closeDomains();
        nextReopen = now;
    }

    /** While down: refuses new submissions, and reopens the NICs with their regions, peers and receive buffers. */
    private int reopen() {
        final WorkerFailedException error = downError;
        if (error != null) {
            failQueued(error);
        }
        if (downForGood || now - nextReopen < 0) {
            return 0;
        }
        nextReopen = now + REOPEN_BACKOFF_NANOS;
        closeDomains(); // what an earlier attempt opened
        openDomains();
        resources.recreate();
        downError = null;
        failure = null;
        LOG.warn("group {}: NICs reopened after the worker failed; regions of this group have new keys", index);
        return 1;
    }

    private void openDomains() {
        for (int nic = 0; nic < domains.length; nic++) {
            domains[nic] = transport.openDomain(
                    new DomainContext(config, index, nic, new NicEvents(index, nic, completions, imms, counters)));
        }
        nicsOpen = true;
    }

    /**
     * Polls the NICs for {@link #CLOSE_FLUSH_NANOS} of real time (the engine's clock may be a test's manual one), so
     * that negative acknowledgements posted while closing leave before the NICs close; a bounded wait on close only.
     */
    private void flushControl() {
        final long until = System.nanoTime() + CLOSE_FLUSH_NANOS;
        while (System.nanoTime() - until < 0) {
            for (final Domain domain : domains) {
                try {
                    domain.poll();
                    drainCompletions();
                } catch (final RuntimeException e) {
                    errors.warn("polling " + domain.description() + " while closing failed", e);
                }
            }
        }
    }

    private void closeDomains() {
        nicsOpen = false;
        for (int nic = 0; nic < domains.length; nic++) {
            final Domain domain = domains[nic];
            if (domain != null) {
                try {
                    domain.close();
                } catch (final RuntimeException | Error e) { // closing the others matters more
                    errors.warn("closing " + domain.description() + " failed", e);
                }
            }
        }
        dropCompletions(); // closing reports the failure of what was posted; those operations ended already
    }
}
