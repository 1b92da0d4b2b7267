package dev.transferengine.core;

import dev.transferengine.Device;
import dev.transferengine.EngineConfig;
import dev.transferengine.EngineCounter;
import dev.transferengine.EngineMetrics;
import dev.transferengine.GroupSpec;
import dev.transferengine.ImmCountListener;
import dev.transferengine.ImmCountState;
import dev.transferengine.ImmCounter;
import dev.transferengine.ImmListener;
import dev.transferengine.ImmTrigger;
import dev.transferengine.MemoryRegion;
import dev.transferengine.NetworkAddress;
import dev.transferengine.NicInfo;
import dev.transferengine.PeerGroup;
import dev.transferengine.PeerInfo;
import dev.transferengine.ReceiveListener;
import dev.transferengine.ReceivePool;
import dev.transferengine.RegionAccess;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SubmitStatus;
import dev.transferengine.TransferCounters;
import dev.transferengine.TransferEngine;
import dev.transferengine.TransferListener;
import dev.transferengine.TransferRequest;
import dev.transferengine.TransportEvent;
import dev.transferengine.UvmWatchListener;
import dev.transferengine.UvmWatcher;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.MalformedDescriptorException;
import dev.transferengine.exceptions.NicCountMismatchException;
import dev.transferengine.exceptions.TransferTimeoutException;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.Transport;
import dev.transferengine.spi.UvmWatcherProvider;
import dev.transferengine.spi.UvmWatcherService;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AgentTerminationException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.transferengine.core.ApiCalls.await;
import static dev.transferengine.core.ApiCalls.given;

/**
 * The engine behind {@link TransferEngine}: checks each call on the caller's thread, hands it to the right group's
 * worker through a bounded queue, and owns the callback thread, the imm-count table and the registries.
 */
final class Engine implements TransferEngine, Region.Owner {

    private static final Logger LOG = LoggerFactory.getLogger(Engine.class);
    /** Engine option: CPU to pin the UVM watchers' polling thread to. */
    static final String UVM_POLL_CPU = "uvm.pollCpu";
    /** Off-heap bytes one receive pool may hold: a typo in a size must fail, not reserve gigabytes. */
    static final long MAX_RECEIVE_POOL_BYTES = 1L << 30;

    /** Shared by every call after close: stackless, so one per engine costs nothing to throw. */
    final EngineClosedException closedError = new EngineClosedException("the engine is closed");

    private final EngineConfig config;
    private final Transport transport;
    private final Counters counters;
    private final CallbackDispatcher callbacks;
    private final ImmCountTable imms;
    private final ImmTriggers triggers;
    private final SendBuffers sendBuffers = new SendBuffers();
    private final Submissions submissionPool;
    private final RequestChecks checks = new RequestChecks(this);
    private final DomainGroup[] groups;
    private final AgentRunner[] workers;
    private final AgentRunner callbackRunner;
    private final ConcurrentHashMap<Region, Boolean> regions = new ConcurrentHashMap<>();
    private final EngineAllocations allocations;
    private final List<Receives> receivePools = new ArrayList<>();
    private final AtomicInteger nextPoolId = new AtomicInteger();
    private final EngineGate gate = new EngineGate();
    private final ThrottledLog agentErrors = new ThrottledLog(LOG);
    private @Nullable UvmWatcherService uvmWatchers;

    Engine(
            final EngineConfig config,
            final Transport transport,
            final TransferCountersUpdater transferCounters,
            final LongSupplier clock) {
        this.config = config;
        this.transport = transport;
        this.allocations = new EngineAllocations(config.option(DeviceMemory.OPTION, DeviceMemory.DEFAULT));
        this.counters =
                new Counters(config.groups().stream().map(GroupSpec::nics).toList(), transferCounters);
        this.callbacks = new CallbackDispatcher(counters, config.idleStrategy());
        this.imms = new ImmCountTable(
                callbacks,
                counters,
                config.maxUnexpectedImms(),
                config.unexpectedImmTtl().toNanos(),
                clock.getAsLong());
        // the callback thread idles like the workers: with spin, completions reach listeners without a park
        this.callbackRunner = new AgentRunner(callbacks.idle(), this::onAgentError, null, callbacks);
        AgentRunner.startOnThread(callbackRunner, EngineThreads.INSTANCE);
        this.submissionPool =
                new Submissions(config.maxInFlight() * config.groups().size() + config.submitQueueCapacity());
        this.groups = new DomainGroup[config.groups().size()];
        this.workers = new AgentRunner[groups.length];
        final WorkerServices services =
                new WorkerServices(transport, imms, callbacks, counters, sendBuffers, submissionPool, clock);
        this.triggers = new ImmTriggers(this, checks, services);
        try {
            for (int g = 0; g < groups.length; g++) {
                groups[g] = new DomainGroup(g, config.groups().get(g), config, services);
                workers[g] = new AgentRunner(groups[g].idle(), this::onAgentError, null, groups[g]);
                AgentRunner.startOnThread(workers[g], EngineThreads.INSTANCE);
            }
            for (final DomainGroup group : groups) {
                await(group.started(), Duration.ofSeconds(60), "opening the NICs of group " + group.index());
            }
        } catch (final RuntimeException e) {
            shutdown();
            throw e;
        }
        LOG.info(
                "transfer engine up: transport {}, {} group(s), main address {} (text form {}); NICs: {}",
                transport.name(),
                groups.length,
                mainAddress().describe(),
                mainAddress(),
                nics().stream().map(NicInfo::description).toList());
    }

    /** Errors that escaped an agent's own handling: counted and logged; the agent runs on. */
    private void onAgentError(final Throwable error) {
        if (error instanceof AgentTerminationException) {
            return; // the callback thread ending after close() from a callback
        }
        counters.increment(EngineCounter.WORKER_ERRORS);
        agentErrors.error("transfer-engine thread error; the thread continues", error);
    }

    // ---- identity and views ----------------------------------------------------------------------------------

    @Override
    public String transport() {
        return transport.name();
    }

    /** The transport named in this engine's NIC addresses; a test decorator of a transport keeps the inner one's. */
    String addressTransport() {
        return mainAddress().transport();
    }

    @Override
    public NetworkAddress mainAddress() {
        return groups[0].domain(0).address();
    }

    @Override
    public int groupCount() {
        return groups.length;
    }

    @Override
    public int nicCount(final int group) {
        if (group < 0 || group >= groups.length) {
            throw new InvalidRequestException("group " + group + " does not exist; this engine has " + groups.length);
        }
        return groups[group].nicCount();
    }

    @Override
    public List<NicInfo> nics() {
        final List<NicInfo> nics = new ArrayList<>();
        for (final DomainGroup group : groups) {
            for (int nic = 0; nic < group.nicCount(); nic++) {
                final Domain domain = group.domain(nic);
                final String groupFailure = group.failure();
                final String failure = groupFailure != null ? groupFailure : domain.failure();
                nics.add(new NicInfo(
                        group.index(), nic, domain.address(), domain.description(), failure == null ? "" : failure));
            }
        }
        return nics;
    }

    @Override
    public List<PeerInfo> peers() {
        final List<PeerInfo> peers = new ArrayList<>();
        for (final DomainGroup group : groups) {
            for (int nic = 0; nic < group.nicCount(); nic++) {
                peers.addAll(group.domain(nic).peers());
            }
        }
        return peers;
    }

    /** Any thread: sums each category and reason over every NIC, in the order the first NIC lists them. */
    @Override
    public List<TransportEvent> transportEvents() {
        final LinkedHashMap<String, TransportEvent> summed = new LinkedHashMap<>();
        for (final DomainGroup group : groups) {
            for (int nic = 0; nic < group.nicCount(); nic++) {
                for (final TransportEvent event : group.domain(nic).events()) {
                    summed.merge(
                            event.category() + '/' + event.reason(),
                            event,
                            (a, b) -> new TransportEvent(
                                    a.category(), a.reason(), a.description(), a.count() + b.count()));
                }
            }
        }
        return List.copyOf(summed.values());
    }

    @Override
    public List<MemoryRegion> regions() {
        return List.copyOf(regions.keySet());
    }

    @Override
    public EngineMetrics metrics() {
        return counters;
    }

    @Override
    public boolean isHealthy() {
        if (gate.isClosed()) {
            return false;
        }
        for (int g = 0; g < groups.length; g++) {
            if (workers[g].isClosed() || groups[g].isStopped()) {
                return false;
            }
        }
        return nics().stream().allMatch(NicInfo::healthy);
    }

    // ---- memory -------------------------------------------------------------------------------------------------

    @Override
    public MemoryRegion register(final MemorySegment segment, final Device device) {
        return register(segment, device, groupFor(device), RegionAccess.READ_WRITE);
    }

    @Override
    public MemoryRegion register(final MemorySegment segment, final Device device, final RegionAccess access) {
        return register(segment, device, groupFor(device), access);
    }

    @Override
    public MemoryRegion allocate(final Device device, final long bytes) {
        return allocate(device, bytes, groupFor(given(device, "device")), RegionAccess.READ_WRITE);
    }

    @Override
    public MemoryRegion allocate(final Device device, final long bytes, final int group, final RegionAccess access) {
        given(device, "device");
        given(access, "access");
        enter();
        try {
            nicCount(group);
            final EngineAllocation memory = allocations.allocate(device, bytes);
            try {
                return register(memory.segment(), device, group, access, memory);
            } catch (final RuntimeException e) {
                if (!(e instanceof TransferTimeoutException)) { // a registration still under way would use it
                    allocations.free(memory);
                }
                throw e;
            }
        } finally {
            exit();
        }
    }

    @Override
    public MemoryRegion register(
            final MemorySegment segment, final Device device, final int group, final RegionAccess access) {
        given(access, "access");
        enter();
        try {
            return register(segment, device, group, access, null);
        } finally {
            exit();
        }
    }

    /** Checks and registers; {@code owned}: the engine allocated the memory. The caller entered. */
    private Region register(
            final MemorySegment segment,
            final Device device,
            final int group,
            final RegionAccess access,
            final @Nullable EngineAllocation owned) {
        nicCount(group);
        final DomainGroup target = groups[group];
        ApiCalls.registrable(segment, device, access, target.worker());
        final Region region = await(
                target.proxy().register(this, segment, device, access, owned),
                config.operationTimeout(),
                "registering " + segment.byteSize() + " bytes");
        regions.put(region, Boolean.TRUE);
        return region;
    }

    @Override
    public RegionDescriptor rekey(final Region region) {
        enter();
        try {
            return await(
                    groups[region.group()].proxy().rekey(region), config.operationTimeout(), "re-keying " + region);
        } finally {
            exit();
        }
    }

    private int groupFor(final Device device) {
        if (device instanceof Device.Cuda cuda) {
            for (int g = 0; g < groups.length; g++) {
                if (config.groups().get(g).cudaDevice().orElse(-1) == cuda.ordinal()) {
                    return g;
                }
            }
            throw new DeviceUnavailableException(
                    "no group serves " + cuda + "; configure a group with cudaDevice " + cuda.ordinal());
        }
        return 0;
    }

    @Override
    public void forget(final Region region) {
        regions.remove(region);
    }

    @Override
    public void deregister(final MemoryRegion region) {
        enter();
        try {
            if (!(region instanceof Region r) || !r.belongsTo(this)) {
                throw new InvalidRequestException("region " + region + " was not registered with this engine");
            }
            if (!r.markDeregistered()) {
                return;
            }
            regions.remove(r);
            await(groups[r.group()].proxy().deregister(r), config.operationTimeout(), "deregistering " + region);
            final EngineAllocation owned = r.owned();
            if (owned != null) { // operations in flight end within their timeout, and then nothing touches it
                await(owned.drained(), config.operationTimeout().multipliedBy(2), "draining " + region);
                allocations.free(owned);
            }
        } finally {
            exit();
        }
    }

    // ---- writes and sends ---------------------------------------------------------------------------------------

    @Override
    public void submit(final TransferRequest request, final TransferListener listener) {
        submit(request, given(listener, "listener"), null, null);
    }

    @Override
    public void cancel(final TransferListener listener) {
        for (final DomainGroup group : groups) {
            group.proxy().cancel(listener);
        }
    }

    @Override
    public void submit(final TransferRequest request, final TransferCounters transferCounters) {
        submit(request, null, given(transferCounters, "counters"), null);
    }

    @Override
    public CompletableFuture<Void> submit(final TransferRequest request) {
        final CompletableFuture<Void> future = new CompletableFuture<>();
        submit(request, null, null, future);
        return future;
    }

    @Override
    public SubmitStatus trySubmit(final TransferRequest request, final TransferListener listener) {
        return trySubmit(request, given(listener, "listener"), null);
    }

    @Override
    public SubmitStatus trySubmit(final TransferRequest request, final TransferCounters transferCounters) {
        return trySubmit(request, null, given(transferCounters, "counters"));
    }

    private void submit(
            final TransferRequest request,
            final @Nullable TransferListener listener,
            final @Nullable TransferCounters transferCounters,
            final @Nullable CompletableFuture<Void> future) {
        enter();
        try {
            final DomainGroup full = offerWrite(request, listener, transferCounters, future);
            if (full != null) {
                throw full.backPressure();
            }
        } finally {
            exit();
        }
    }

    private SubmitStatus trySubmit(
            final TransferRequest request,
            final @Nullable TransferListener listener,
            final @Nullable TransferCounters transferCounters) {
        if (!tryEnter()) {
            return SubmitStatus.CLOSED;
        }
        try {
            return offerWrite(request, listener, transferCounters, null) == null
                    ? SubmitStatus.ACCEPTED
                    : SubmitStatus.BACK_PRESSURED;
        } finally {
            exit();
        }
    }

    /** Checks and queues a write or read; returns null when queued, else the group whose queue is full. */
    @Nullable DomainGroup offerWrite(
            final TransferRequest request,
            final @Nullable TransferListener listener,
            final @Nullable TransferCounters transferCounters,
            final @Nullable CompletableFuture<Void> future) {
        final DomainGroup group = groups[checks.check(given(request, "request"))];
        return offer(group, submissionPool.acquire().write(request, listener, transferCounters, future)) ? null : group;
    }

    @Override
    public void send(final NetworkAddress peer, final MemorySegment message, final TransferListener listener) {
        given(peer, "peer");
        given(message, "message");
        given(listener, "listener");
        enter();
        try {
            if (!peer.transport().equals(addressTransport())) {
                throw new MalformedDescriptorException("send to a '" + peer.transport()
                        + "' address but this engine uses '" + addressTransport() + "'");
            }
            if (!offer(groups[0], submissionPool.acquire().send(peer, sendBuffers.copyOf(message), listener))) {
                throw groups[0].backPressure();
            }
        } finally {
            exit();
        }
    }

    @Override
    public CompletableFuture<Void> send(final NetworkAddress peer, final byte[] message) {
        final CompletableFuture<Void> future = new CompletableFuture<>();
        send(peer, MemorySegment.ofArray(message), ApiCalls.completing(future));
        return future;
    }

    /** Queues a submission; false, with the submission recycled and counted, when the group's queue is full. */
    private boolean offer(final DomainGroup group, final Submission submission) {
        counters.inFlight(1);
        if (!group.offer(submission)) {
            counters.inFlight(-1);
            counters.increment(EngineCounter.BACK_PRESSURE);
            if (submission.sendBuffer != null) {
                sendBuffers.release(submission.sendBuffer);
            }
            submissionPool.recycle(submission);
            return false;
        }
        counters.increment(EngineCounter.REQUESTS_SUBMITTED);
        return true;
    }

    @Override
    public ReceivePool postedReceivePool(final int bufferSize, final int count, final ReceiveListener listener) {
        return receives(bufferSize, count, false, listener);
    }

    @Override
    public ReceivePool creditedReceivePool(final int bufferSize, final int count, final ReceiveListener listener) {
        return receives(bufferSize, count, true, listener);
    }

    private ReceivePool receives(
            final int bufferSize, final int count, final boolean credited, final ReceiveListener listener) {
        given(listener, "listener");
        enter();
        try {
            ApiCalls.receivePoolSize(credited ? "creditedReceivePool" : "postedReceivePool", bufferSize, count);
            final Receives pool =
                    new Receives(nextPoolId.getAndIncrement(), bufferSize, count, credited, listener, groups[0]);
            synchronized (receivePools) {
                receivePools.removeIf(Receives::freed); // closed pools, their memory freed already
                receivePools.add(pool);
            }
            await(groups[0].proxy().addReceivePool(pool), config.operationTimeout(), "posting receives");
            return pool;
        } finally {
            exit();
        }
    }

    // ---- imms ---------------------------------------------------------------------------------------------------

    @Override
    public @Nullable ImmCountState expectImmCount(final int imm, final int count, final ImmCountListener listener) {
        given(listener, "listener");
        checkOpen();
        return imms.expect(imm, count, listener);
    }

    @Override
    public @Nullable ImmCountState removeImmCount(final int imm) {
        return imms.remove(imm);
    }

    @Override
    public ImmTrigger triggerOnImm(
            final int imm, final int count, final TransferRequest request, final TransferListener listener) {
        return triggers.arm(imm, count, request, given(listener, "listener"), null);
    }

    @Override
    public ImmTrigger triggerOnImm(
            final int imm, final int count, final TransferRequest request, final TransferCounters transferCounters) {
        return triggers.arm(imm, count, request, null, given(transferCounters, "counters"));
    }

    @Override
    public void onImm(final @Nullable ImmListener listener) {
        imms.immListener(listener);
    }

    @Override
    public ImmCounter immCounter(final int imm) {
        checkOpen();
        return imms.counter(imm);
    }

    // ---- peer groups --------------------------------------------------------------------------------------------

    @Override
    public PeerGroup addPeerGroup(final List<List<NetworkAddress>> peers) {
        enter();
        try {
            if (peers.isEmpty()) {
                throw new InvalidRequestException("a peer group needs at least one peer");
            }
            final int nics = groups[0].nicCount();
            final List<List<NetworkAddress>> copy = new ArrayList<>(peers.size());
            for (int p = 0; p < peers.size(); p++) {
                final List<NetworkAddress> addresses = peers.get(p);
                if (addresses.size() != nics) {
                    throw new NicCountMismatchException(
                            "peer " + p + " lists " + addresses.size() + " NIC addresses but group 0 has " + nics);
                }
                copy.add(List.copyOf(addresses));
            }
            final long[][] handles =
                    await(groups[0].proxy().resolvePeers(copy), config.operationTimeout(), "resolving a peer group");
            return new ResolvedPeerGroup(this, List.copyOf(copy), handles);
        } finally {
            exit();
        }
    }

    // ---- UVM watchers -------------------------------------------------------------------------------------------

    @Override
    public UvmWatcher allocUvmWatcher(final UvmWatchListener listener) {
        given(listener, "listener");
        enter();
        try {
            return uvmWatchers().allocate(listener);
        } finally {
            exit();
        }
    }

    /**
     * Opened on first use from the {@link UvmWatcherProvider} the options name, on the GPU of the first group that has
     * one (else device 0); listeners run on our callback thread.
     */
    private synchronized UvmWatcherService uvmWatchers() {
        if (uvmWatchers == null) {
            final int device = config.groups().stream()
                    .filter(g -> g.cudaDevice().isPresent())
                    .mapToInt(g -> g.cudaDevice().getAsInt())
                    .findFirst()
                    .orElse(0);
            final String pollCpu = config.option(UVM_POLL_CPU, "");
            final UvmWatcherService opened = UvmWatcherProvider.require(
                            config.option(UvmWatcherProvider.OPTION, UvmWatcherProvider.DEFAULT))
                    .open(
                            device,
                            config.idleStrategy(),
                            pollCpu.isEmpty() ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(pollCpu)));
            callbacks.attachUvm(opened::dispatch);
            uvmWatchers = opened;
        }
        return uvmWatchers;
    }

    // ---- lifecycle ----------------------------------------------------------------------------------------------

    @Override
    public void close() {
        if (!gate.close()) {
            return;
        }
        final long deadline = System.nanoTime() + config.drainTimeout().toNanos();
        while (counters.inFlight() > 0 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(1_000_000);
        }
        if (counters.inFlight() > 0) {
            LOG.warn(
                    "closing with {} operations still in flight after {}; they fail with EngineClosedException",
                    counters.inFlight(),
                    config.drainTimeout());
        }
        shutdown();
        LOG.info("transfer engine closed");
    }

    private void shutdown() {
        gate.shut();
        for (final AgentRunner worker : workers) {
            if (worker != null) {
                worker.close();
            }
        }
        final EngineClosedException error = new EngineClosedException("engine closed before the operation started");
        for (final DomainGroup group : groups) {
            if (group != null) {
                group.failQueued(error);
            }
        }
        if (callbacks.isCurrentThread()) {
            callbacks.stopAfterThisEvent(); // close() from a callback: the thread cannot wait for itself to end
        } else {
            callbackRunner.close();
        }
        synchronized (this) {
            if (uvmWatchers != null) {
                uvmWatchers.close();
            }
        }
        synchronized (receivePools) {
            receivePools.forEach(Receives::release);
        }
        sendBuffers.close();
        allocations.freeAll();
    }

    void enter() {
        if (!tryEnter()) {
            throw closedError;
        }
    }

    /** Counts the caller in, unless the engine is closed; a true answer must be followed by {@link #exit()}. */
    boolean tryEnter() {
        return gate.tryEnter();
    }

    void exit() {
        gate.exit();
    }

    private void checkOpen() {
        if (gate.isClosed()) {
            throw closedError;
        }
    }
}
