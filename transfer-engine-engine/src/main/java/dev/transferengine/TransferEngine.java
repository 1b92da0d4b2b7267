package dev.transferengine;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * A point-to-point transfer engine: registers memory, posts one-sided writes with 32-bit immediates and two-sided
 * sends, and counts immediates on the receiver. Delivery is reliable but unordered: completion on the receiver is
 * tracked by counting imms, never by order.
 *
 * <p>All methods are thread-safe and non-blocking unless stated: submissions go through a bounded queue to the
 * group's worker; user callbacks run on one callback thread, never on a worker. Bad input throws a typed
 * {@link TransferEngineException} at once; failures during transfer reach the request's completion.
 */
public interface TransferEngine extends AutoCloseable {

    static TransferEngineBuilder builder() {
        return new TransferEngineBuilder();
    }

    /** The transport in use, e.g. {@code tcp}. */
    String transport();

    /** Address of group 0, NIC 0: where peers send two-sided messages. */
    NetAddr mainAddress();

    /** Number of groups. */
    int groupCount();

    /** NICs of one group. */
    int nicCount(int group);

    /** Every NIC of every group, with its address and health. */
    List<NicInfo> nics();

    /** Peers the NICs talk to, with their state. */
    List<PeerInfo> peers();

    /** Regions registered now. */
    List<MemoryRegion> regions();

    EngineMetrics metrics();

    /** Whether every worker is running and every NIC healthy. */
    boolean isHealthy();

    /**
     * Registers {@code segment} on every NIC of its group: host memory on group 0, device memory on the group of that
     * GPU. Blocks until every NIC registered it.
     */
    MemoryRegion register(MemorySegment segment, Device device);

    /** Registers on a chosen group. */
    MemoryRegion register(MemorySegment segment, Device device, int group);

    /** Deregisters on every NIC that registered it; later writes with its keys are refused by this engine. */
    void deregister(MemoryRegion region);

    /** Submits a write; {@code listener} runs once on the callback thread. */
    void submit(WriteRequest request, TransferListener listener);

    /** Submits a write whose completion only bumps {@code counters}, with no callback. */
    void submit(WriteRequest request, TransferCounters counters);

    /** Submits a write; the future completes on the callback thread. */
    CompletableFuture<Void> submit(WriteRequest request);

    /**
     * Like {@link #submit(WriteRequest, TransferListener)}, but a full queue or a closed engine is answered with a
     * status instead of an exception; {@code listener} runs only when the answer is {@link SubmitStatus#ACCEPTED}.
     * A request that is invalid still throws, since retrying cannot help it.
     */
    SubmitStatus trySubmit(WriteRequest request, TransferListener listener);

    /**
     * Like {@link #submit(WriteRequest, TransferCounters)}, answering back-pressure and a closed engine with a
     * status; {@code counters} count the request only when the answer is {@link SubmitStatus#ACCEPTED}.
     */
    SubmitStatus trySubmit(WriteRequest request, TransferCounters counters);

    /** Sends a copy of {@code message} to the peer's NIC (normally its {@link #mainAddress()}); the caller may reuse it at once. */
    void send(NetAddr peer, MemorySegment message, TransferListener listener);

    CompletableFuture<Void> send(NetAddr peer, byte[] message);

    /** Posts {@code count} receive buffers of {@code bufferSize} bytes on group 0, NIC 0; each returns to the pool when the listener returns. */
    ReceivePool postReceives(int bufferSize, int count, ReceiveListener listener);

    /**
     * A credited pool of {@code count} receive buffers on group 0, NIC 0: nothing is posted until
     * {@link ReceivePool#grant(long)} gives credit, one buffer per credit. A sender finding no posted buffer gets
     * {@link RemoteAccessException} ({@code NO_RECEIVE_BUFFER}), which is how back-pressure reaches it.
     */
    ReceivePool receivePool(int bufferSize, int count, ReceiveListener listener);

    /**
     * Fires {@code listener} when the imm count for {@code imm} reaches exactly {@code count} (imms already credited
     * count), subtracting {@code count}. Replaces any earlier expectation or counter for {@code imm}.
     *
     * @return the replaced state, or null
     */
    @Nullable ImmCountState expectImmCount(int imm, int count, ImmCountListener listener);

    /** Removes an expectation or counter; imms for it are then delivered to the imm listener (or credited). */
    @Nullable ImmCountState removeImmCount(int imm);

    /** Sets (or, with null, clears) the listener for imms nobody expects; without one they are credited per imm. */
    void onImm(@Nullable ImmListener listener);

    /** A polled counter for {@code imm}; replaces an expectation for it, keeping its credits. */
    ImmCounter immCounter(int imm);

    /** Resolves peers once for scatter and barrier: per peer, one address per NIC of group 0. Blocks until resolved. */
    PeerGroup addPeerGroup(List<List<NetAddr>> peers);

    /**
     * The transport's counts of failed handshakes, refused connections and requests, closed connections and evicted
     * peers, each summed over every NIC; the same categories and reasons in every call. Any thread; allocates the
     * list; meant for metrics and diagnostics, not for the hot path.
     */
    default List<TransportEvent> transportEvents() {
        return List.of();
    }

    /**
     * Allocates a UVM watcher: a 64-bit slot (initially 0) in pinned, device-mapped host memory that a GPU kernel,
     * also one inside a CUDA graph, writes through {@link UvmWatcher#devicePointer()}. A polling thread sees each
     * change and calls {@code listener(old, new)} on the callback thread; returning false releases the slot. Any
     * thread; the first call starts the polling thread and allocates a page (blocks for the driver calls).
     *
     * @throws DeviceUnavailableException if this engine cannot use a GPU, with the reason
     */
    default UvmWatcher allocUvmWatcher(final UvmWatchListener listener) {
        throw new DeviceUnavailableException(getClass().getName() + " has no UVM watchers");
    }

    /**
     * Stops accepting work, waits up to the drain timeout for in-flight operations, fails the rest with
     * {@link EngineClosedException}, then closes every NIC.
     */
    @Override
    void close();
}
