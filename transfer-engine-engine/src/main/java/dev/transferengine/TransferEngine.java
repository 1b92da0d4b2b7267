package dev.transferengine;

import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.MalformedDescriptorException;
import dev.transferengine.exceptions.NicCountMismatchException;
import dev.transferengine.exceptions.RegionBoundsException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * A point-to-point transfer engine: registers memory, posts one-sided writes with 32-bit immediates, one-sided reads
 * (pull) and two-sided sends, and counts immediates on the receiver. Delivery is reliable but unordered: completion on the receiver is
 * tracked by counting imms, never by order.
 *
 * <p>All methods are thread-safe and non-blocking unless stated: submissions go through a bounded queue to the
 * group's worker; user callbacks run on one callback thread, never on a worker. Bad input throws a typed
 * {@link TransferEngineException} at once; failures during transfer reach the request's completion.
 */
public interface TransferEngine extends AutoCloseable {

    /**
     * Starts configuring an engine; nothing is opened until {@link TransferEngineBuilder#build()}.
     *
     * @return a new builder with the defaults
     */
    static TransferEngineBuilder builder() {
        return new TransferEngineBuilder();
    }

    /**
     * The transport in use; {@code auto} in the config resolves to the one chosen.
     *
     * @return the transport's name, e.g. {@code tcp} or {@code fabric}
     */
    String transport();

    /**
     * Address of group 0, NIC 0: where peers send two-sided messages.
     *
     * @return the address to hand to peers for {@link #send(NetworkAddress, MemorySegment, TransferListener)}
     */
    NetworkAddress mainAddress();

    /**
     * How many groups (workers) this engine runs.
     *
     * @return the number of groups, as configured
     */
    int groupCount();

    /**
     * How many NICs one group drives.
     *
     * @param group the group's index, 0 to {@link #groupCount()} - 1
     * @return the number of NICs, 1..4
     * @throws InvalidRequestException if the group does not exist
     */
    int nicCount(int group);

    /**
     * Every NIC of every group, with its address and health. Allocates; for health checks and diagnostics.
     *
     * @return a snapshot, group by group in NIC order
     */
    List<NicInfo> nics();

    /**
     * Peers the NICs talk to, with their state. Allocates; for health checks and diagnostics.
     *
     * @return a snapshot over every NIC; a peer reached through several NICs appears once per NIC
     */
    List<PeerInfo> peers();

    /**
     * Regions registered now.
     *
     * @return a snapshot, in no particular order
     */
    List<MemoryRegion> regions();

    /**
     * The engine's live counters.
     *
     * @return the metrics view, the same instance on every call
     */
    EngineMetrics metrics();

    /**
     * Whether every worker is running and every NIC healthy. Allocates (it reads {@link #nics()}).
     *
     * @return false once closed, or while a worker is stopped or a NIC failed
     */
    boolean isHealthy();

    /**
     * Registers {@code segment} on every NIC of its group: host memory on group 0, device memory on the group of that
     * GPU. Blocks until every NIC registered it.
     *
     * @param segment the memory: a native, writable segment from a shared arena for host memory, or one carrying the
     *     device pointer for device memory; the caller keeps it alive until {@link #deregister(MemoryRegion)}. Memory
     *     freed while registered is deregistered by the engine once the segment's scope is closed, or, for device
     *     memory, once the driver no longer places the address in the allocation it had at registration (e.g. after
     *     {@code cuMemFree}); memory a caching allocator reuses without freeing it goes unseen, so deregister first
     *     (docs/security.md, "Freed memory")
     * @param device where the memory lives
     * @return the region, {@link RegionAccess#READ_WRITE}, whose {@link MemoryRegion#descriptor()} peers write to and
     *     read from
     * @throws InvalidRequestException if the segment is on the heap, read-only or confined to one thread, or device
     *     memory that no allocation holds (freed)
     * @throws DeviceUnavailableException if no group serves that GPU
     * @throws TransferTimeoutException if registering outlasts the operation timeout
     * @throws EngineClosedException if the engine is closed
     */
    MemoryRegion register(MemorySegment segment, Device device);

    /**
     * Registers on a chosen group, whose worker then serves writes from the region. Blocks until every NIC of the
     * group registered it.
     *
     * @param segment the memory, as for {@link #register(MemorySegment, Device)}
     * @param device where the memory lives
     * @param group the group's index, 0 to {@link #groupCount()} - 1
     * @return the region
     * @throws InvalidRequestException if the group does not exist, or the segment is on the heap, read-only or
     *     confined to one thread
     * @throws TransferTimeoutException if registering outlasts the operation timeout
     * @throws EngineClosedException if the engine is closed
     */
    default MemoryRegion register(MemorySegment segment, Device device, int group) {
        return register(segment, device, group, RegionAccess.READ_WRITE);
    }

    /**
     * Registers as {@link #register(MemorySegment, Device)} does, with what peers may do with the region: a
     * {@link RegionAccess#READ_ONLY} region can only be read by peers (and may be a read-only segment), a
     * {@link RegionAccess#WRITE_ONLY} one only written. The descriptor carries the access, and the NICs enforce it.
     * Blocks until every NIC registered it.
     *
     * @param segment the memory, as for {@link #register(MemorySegment, Device)}; read-only only for
     *     {@link RegionAccess#READ_ONLY}
     * @param device where the memory lives
     * @param access what peers may do with the region
     * @return the region
     * @throws InvalidRequestException if the segment is on the heap or confined to one thread, or read-only while
     *     peers may write into it
     * @throws DeviceUnavailableException if no group serves that GPU
     * @throws TransferTimeoutException if registering outlasts the operation timeout
     * @throws EngineClosedException if the engine is closed
     */
    MemoryRegion register(MemorySegment segment, Device device, RegionAccess access);

    /**
     * Registers on a chosen group, with what peers may do with the region; see
     * {@link #register(MemorySegment, Device, RegionAccess)}. Blocks until every NIC of the group registered it.
     *
     * @param segment the memory, as for {@link #register(MemorySegment, Device, RegionAccess)}
     * @param device where the memory lives
     * @param group the group's index, 0 to {@link #groupCount()} - 1
     * @param access what peers may do with the region
     * @return the region
     * @throws InvalidRequestException if the group does not exist, or the segment is on the heap, confined to one
     *     thread, or read-only while peers may write into it
     * @throws TransferTimeoutException if registering outlasts the operation timeout
     * @throws EngineClosedException if the engine is closed
     */
    MemoryRegion register(MemorySegment segment, Device device, int group, RegionAccess access);

    /**
     * Allocates {@code bytes} of memory on {@code device} and registers it as {@link #register(MemorySegment,
     * Device)} does, on the group of that device, {@link RegionAccess#READ_WRITE}. The engine owns the memory: reach
     * it through {@link MemoryRegion#segment()} (host memory to read and write; for a GPU, a segment whose address is
     * the device pointer, for kernels and copies), never free it yourself, and {@link #deregister(MemoryRegion)} it
     * when done. Deregistering waits until nothing the engine queued still touches the memory (operations in flight
     * end, staged copies finish), then frees it; {@link #close()} frees what is still allocated. So no remote write
     * can land in it after it was freed, and no read can return another allocation's bytes, which memory the
     * application frees itself cannot promise (docs/security.md, "Freed memory"). Host memory comes from a shared
     * arena of its own, page-aligned; device memory from the device memory provider ({@code cuMemAlloc}). Blocks
     * for the allocation and the registration.
     *
     * @param device where the memory lives
     * @param bytes how much, more than 0
     * @return the registered region
     * @throws InvalidRequestException if {@code bytes} is not positive or that much host memory cannot be had
     * @throws DeviceUnavailableException if no group serves that GPU, or the device memory provider cannot allocate
     *     it
     * @throws TransferTimeoutException if registering outlasts the operation timeout (the memory is then freed at
     *     close)
     * @throws EngineClosedException if the engine is closed
     */
    MemoryRegion allocate(Device device, long bytes);

    /**
     * Allocates as {@link #allocate(Device, long)} does, registered on a chosen group with what peers may do with
     * it.
     *
     * @param device where the memory lives
     * @param bytes how much, more than 0
     * @param group the group's index, 0 to {@link #groupCount()} - 1
     * @param access what peers may do with the region
     * @return the registered region
     * @throws InvalidRequestException if the group does not exist, or {@code bytes} is not positive or too large
     * @throws DeviceUnavailableException if the device memory provider cannot serve the device or allocate
     * @throws TransferTimeoutException if registering outlasts the operation timeout
     * @throws EngineClosedException if the engine is closed
     */
    MemoryRegion allocate(Device device, long bytes, int group, RegionAccess access);

    /**
     * Deregisters on every NIC that registered it; later writes with its keys are refused by this engine. Blocks until
     * every NIC dropped it; a second call returns at once. For memory from {@link #allocate(Device, long)}, also
     * waits until nothing the engine queued touches the memory, then frees it; the segment must not be used after.
     *
     * @param region a region this engine registered
     * @throws InvalidRequestException if another engine registered the region
     * @throws TransferTimeoutException if an allocated region's memory is still in use after twice the operation
     *     timeout (it is then freed at close)
     * @throws EngineClosedException if the engine is closed
     */
    void deregister(MemoryRegion region);

    /**
     * Submits a write or a read; {@code listener} runs once on the callback thread. Does not block.
     *
     * @param request the write or read, checked against its regions, their access and its group now
     * @param listener told of the outcome, exactly once
     * @throws InvalidRequestException if the request names a NIC, region or peer group this engine cannot use, or
     *     an argument is null
     * @throws RegionBoundsException if a write or read would fall outside its source or destination region
     * @throws NicCountMismatchException if a peer's descriptor names a different number of NICs than the group
     * @throws RemoteAccessException if the peer's descriptor rules the request out: a write into a
     *     {@link RegionAccess#READ_ONLY} region or a read of a {@link RegionAccess#WRITE_ONLY} one
     * @throws BackPressureException if the group's submission queue is full; nothing was queued
     * @throws EngineClosedException if the engine is closed
     */
    void submit(TransferRequest request, TransferListener listener);

    /**
     * Cancels the write or read submitted with {@code listener}, which should answer
     * {@link TransferListener#isCancelled()} true from now on (so that a request still queued is never posted). A
     * posted request has its queued pieces withdrawn and ends at once with
     * {@link dev.transferengine.exceptions.OperationCancelledException}; pieces already handed to the transport may
     * still land (docs/delivery-contract.md), and a write carrying an imm tells its receivers (a negative
     * acknowledgement). Nothing happens for a request that ended already. Any thread; does not block.
     *
     * @param listener the listener the request was submitted with (compared by identity)
     */
    void cancel(TransferListener listener);

    /**
     * Submits a write or a read whose completion only bumps {@code counters}, with no callback. Does not block; no
     * listener, future or callback-thread hand-off is involved.
     *
     * @param request the write or read, checked now
     * @param counters bumped once, on the worker, when the request ends; one instance may count many requests
     * @throws InvalidRequestException if the request names a NIC, region or peer group this engine cannot use, or
     *     an argument is null
     * @throws RegionBoundsException if a write or read would fall outside its source or destination region
     * @throws NicCountMismatchException if a peer's descriptor names a different number of NICs than the group
     * @throws RemoteAccessException if the peer's descriptor rules the request out (see
     *     {@link #submit(TransferRequest, TransferListener)})
     * @throws BackPressureException if the group's submission queue is full; nothing was queued
     * @throws EngineClosedException if the engine is closed
     */
    void submit(TransferRequest request, TransferCounters counters);

    /**
     * Submits a write or a read; the future completes on the callback thread. Does not block; allocates the future.
     *
     * @param request the write or read, checked now
     * @return completes with null when every piece completed (for a read: every byte is in the local region), or
     *     exceptionally with the request's {@link TransferEngineException}; dependent stages without an executor run
     *     on the callback thread
     * @throws InvalidRequestException if the request names a NIC, region or peer group this engine cannot use, or
     *     an argument is null
     * @throws RegionBoundsException if a write or read would fall outside its source or destination region
     * @throws NicCountMismatchException if a peer's descriptor names a different number of NICs than the group
     * @throws RemoteAccessException if the peer's descriptor rules the request out (see
     *     {@link #submit(TransferRequest, TransferListener)})
     * @throws BackPressureException if the group's submission queue is full; nothing was queued
     * @throws EngineClosedException if the engine is closed
     */
    CompletableFuture<Void> submit(TransferRequest request);

    /**
     * Like {@link #submit(TransferRequest, TransferListener)}, but a full queue or a closed engine is answered with a
     * status instead of an exception; {@code listener} runs only when the answer is {@link SubmitStatus#ACCEPTED}.
     * A request that is invalid still throws, since retrying cannot help it. Does not block, and makes no exception
     * for back-pressure or a closed engine.
     *
     * @param request the write or read, checked now
     * @param listener told of the outcome, exactly once, if accepted
     * @return {@link SubmitStatus#ACCEPTED}, {@link SubmitStatus#BACK_PRESSURED} or {@link SubmitStatus#CLOSED}
     * @throws InvalidRequestException if the request names a NIC, region or peer group this engine cannot use, or
     *     an argument is null
     * @throws RegionBoundsException if a write or read would fall outside its source or destination region
     * @throws NicCountMismatchException if a peer's descriptor names a different number of NICs than the group
     * @throws RemoteAccessException if the peer's descriptor rules the request out
     */
    SubmitStatus trySubmit(TransferRequest request, TransferListener listener);

    /**
     * Like {@link #submit(TransferRequest, TransferCounters)}, answering back-pressure and a closed engine with a
     * status; {@code counters} count the request only when the answer is {@link SubmitStatus#ACCEPTED}. Does not
     * block; no listener, future or callback-thread hand-off is involved.
     *
     * @param request the write or read, checked now
     * @param counters bumped once, on the worker, when an accepted request ends
     * @return {@link SubmitStatus#ACCEPTED}, {@link SubmitStatus#BACK_PRESSURED} or {@link SubmitStatus#CLOSED}
     * @throws InvalidRequestException if the request names a NIC, region or peer group this engine cannot use, or
     *     an argument is null
     * @throws RegionBoundsException if a write or read would fall outside its source or destination region
     * @throws NicCountMismatchException if a peer's descriptor names a different number of NICs than the group
     * @throws RemoteAccessException if the peer's descriptor rules the request out
     */
    SubmitStatus trySubmit(TransferRequest request, TransferCounters counters);

    /**
     * Sends a copy of {@code message} to the peer's NIC (normally its {@link #mainAddress()}); the caller may reuse it
     * at once. Goes through group 0. Does not block; copies the message into a pooled buffer.
     *
     * @param peer the receiving NIC's address
     * @param message the bytes to send; the receiver needs a posted buffer at least this long
     * @param listener told once the receiver acknowledged, or of the failure (e.g. {@link RemoteAccessException}
     *     with {@code NO_RECEIVE_BUFFER})
     * @throws MalformedDescriptorException if {@code peer} belongs to another transport
     * @throws InvalidRequestException if an argument is null
     * @throws BackPressureException if group 0's submission queue is full; nothing was sent
     * @throws EngineClosedException if the engine is closed
     */
    void send(NetworkAddress peer, MemorySegment message, TransferListener listener);

    /**
     * Sends a copy of {@code message}, as {@link #send(NetworkAddress, MemorySegment, TransferListener)}; the caller may
     * reuse the array at once. Allocates the future.
     *
     * @param peer the receiving NIC's address
     * @param message the bytes to send
     * @return completes with null when the receiver acknowledged, or exceptionally with the send's
     *     {@link TransferEngineException}; on the callback thread
     * @throws MalformedDescriptorException if {@code peer} belongs to another transport
     * @throws BackPressureException if group 0's submission queue is full; nothing was sent
     * @throws EngineClosedException if the engine is closed
     */
    CompletableFuture<Void> send(NetworkAddress peer, byte[] message);

    /**
     * Posts {@code count} receive buffers of {@code bufferSize} bytes on group 0, NIC 0; each returns to the pool when
     * the listener returns, and is posted again. Allocates the buffers, off the heap.
     *
     * @param bufferSize bytes per buffer (>= 1): the longest message the pool accepts; a longer send fails at the
     *     sender naming both sizes (see {@link ReceivePool#bufferSize()}, and where libfabric does not keep it yet)
     * @param count how many buffers, 1 to 16,777,215
     * @param listener told of each message, on the callback thread
     * @return the pool; close it to withdraw its buffers and free them
     * @throws InvalidRequestException if {@code bufferSize} or {@code count} is out of range, if the pool would hold
     *     more than 1 GiB ({@code bufferSize * count}), or if {@code listener} is null
     * @throws EngineClosedException if the engine is closed
     */
    ReceivePool postedReceivePool(int bufferSize, int count, ReceiveListener listener);

    /**
     * A credited pool of {@code count} receive buffers on group 0, NIC 0: nothing is posted until
     * {@link ReceivePool#grant(long)} gives credit, one buffer per credit. A sender finding no posted buffer gets
     * {@link RemoteAccessException} ({@code NO_RECEIVE_BUFFER}), which is how back-pressure reaches it. Allocates the
     * buffers, off the heap.
     *
     * @param bufferSize bytes per buffer (>= 1): the longest message the pool accepts, as for
     *     {@link #postedReceivePool(int, int, ReceiveListener)}
     * @param count how many buffers, 1 to 16,777,215: at most this many are posted however much credit is granted
     * @param listener told of each message, on the callback thread
     * @return the pool, with no credit yet
     * @throws InvalidRequestException if {@code bufferSize} or {@code count} is out of range, if the pool would hold
     *     more than 1 GiB ({@code bufferSize * count}), or if {@code listener} is null
     * @throws EngineClosedException if the engine is closed
     */
    ReceivePool creditedReceivePool(int bufferSize, int count, ReceiveListener listener);

    /**
     * Fires {@code listener} when the imm count for {@code imm} reaches exactly {@code count} (imms already credited
     * count), subtracting {@code count}. Replaces any earlier expectation, counter or trigger for {@code imm}. Any
     * thread; takes a short lock, never waits for the worker.
     *
     * @param imm the 32-bit imm value to count
     * @param count how many imms make the expectation fire (>= 1)
     * @param listener called on the callback thread each time the count is reached
     * @return the replaced state, or null
     * @throws InvalidRequestException if {@code count} is less than 1 or {@code listener} is null
     * @throws EngineClosedException if the engine is closed
     */
    @Nullable ImmCountState expectImmCount(int imm, int count, ImmCountListener listener);

    /**
     * Arms a triggered write: each time {@code count} imms {@code imm} have been counted, the engine submits
     * {@code request} from the worker thread that counted the last of them, with no callback or caller thread in
     * between; {@code listener} is told of each submission's outcome. Replaces any earlier expectation, counter or
     * trigger for {@code imm}, keeping its credits: those already there fire it at once, on this thread.
     * {@link #removeImmCount(int)} or {@link ImmTrigger#close()} disarms it. A firing that finds the group's queue
     * full, the engine closed or the request no longer valid (e.g. its source region deregistered) fails that
     * submission through {@code listener} with the typed error {@link #submit(TransferRequest, TransferListener)}
     * would throw; the trigger stays armed. A negative acknowledgement for {@code imm} is counted and otherwise
     * ignored: the trigger stays armed, counting the imms that do land. Any thread; takes a short lock, never waits for
     * the worker; allocates the trigger (a firing allocates nothing beyond what a submit does).
     *
     * <p>Any peer that can land imm {@code imm} here fires it, once per {@code count} imms, and only the group's queue
     * bounds the rate (a firing that finds it full fails as back-pressure). The refusal below catches a loop to this
     * engine only: triggers on two engines that each write the imm firing the other's send without end
     * (docs/security.md, "Triggered writes").
     *
     * @param imm the 32-bit imm value to count
     * @param count how many imms make the trigger fire once (>= 1)
     * @param request the write or read to submit at each firing, checked now and again at each firing
     * @param listener told of each firing's outcome, on the callback thread
     * @return the armed trigger
     * @throws InvalidRequestException if {@code count} is less than 1, an argument is null, the request names a
     *     NIC, region or peer group this engine cannot use, or it writes {@code imm} to this engine (each landing
     *     would fire the trigger again, without end)
     * @throws RegionBoundsException if the request would fall outside its source or destination region
     * @throws NicCountMismatchException if a peer's descriptor names a different number of NICs than the group
     * @throws RemoteAccessException if the peer's descriptor rules the request out
     * @throws EngineClosedException if the engine is closed
     */
    ImmTrigger triggerOnImm(int imm, int count, TransferRequest request, TransferListener listener);

    /**
     * Like {@link #triggerOnImm(int, int, TransferRequest, TransferListener)}, but each firing's outcome only bumps
     * {@code counters}, on the worker, with no callback: a failed firing (back-pressure, a closed engine, a request no
     * longer valid) counts as failed.
     *
     * @param imm the 32-bit imm value to count
     * @param count how many imms make the trigger fire once (>= 1)
     * @param request the write or read to submit at each firing, checked now and again at each firing
     * @param counters bumped once per firing, when its submission ends
     * @return the armed trigger
     * @throws InvalidRequestException if {@code count} is less than 1, an argument is null, the request names a
     *     NIC, region or peer group this engine cannot use, or it writes {@code imm} to this engine (each landing
     *     would fire the trigger again, without end)
     * @throws RegionBoundsException if the request would fall outside its source or destination region
     * @throws NicCountMismatchException if a peer's descriptor names a different number of NICs than the group
     * @throws RemoteAccessException if the peer's descriptor rules the request out
     * @throws EngineClosedException if the engine is closed
     */
    ImmTrigger triggerOnImm(int imm, int count, TransferRequest request, TransferCounters counters);

    /**
     * Removes an expectation, counter or trigger; imms for it are then delivered to the imm listener (or credited). Any
     * thread; takes a short lock, never waits for the worker; works on a closed engine too.
     *
     * @param imm the 32-bit imm value
     * @return the removed state, or null if nothing counted {@code imm}
     */
    @Nullable ImmCountState removeImmCount(int imm);

    /**
     * Sets (or, with null, clears) the listener for imms nobody expects; without one they are credited per imm. Any
     * thread.
     *
     * @param listener called on the callback thread for each unclaimed imm, or null
     */
    void onImm(@Nullable ImmListener listener);

    /**
     * A polled counter for {@code imm}; replaces an expectation or trigger for it, keeping its credits. Any thread;
     * takes a short lock, never waits for the worker.
     *
     * @param imm the 32-bit imm value to count
     * @return the counter, credited by the worker with no callback
     * @throws EngineClosedException if the engine is closed
     */
    ImmCounter immCounter(int imm);

    /**
     * Resolves peers once for scatter and barrier: per peer, one address per NIC of group 0. Blocks until resolved.
     *
     * @param peers per peer, its NIC addresses in NIC order (copied)
     * @return the group, for {@link ScatterWrite#withGroup(PeerGroup)} and {@link BarrierWrite#withGroup(PeerGroup)}
     *     on this engine
     * @throws InvalidRequestException if {@code peers} is empty
     * @throws NicCountMismatchException if a peer lists a different number of addresses than group 0 has NICs
     * @throws TransferTimeoutException if resolving outlasts the operation timeout
     * @throws EngineClosedException if the engine is closed
     */
    PeerGroup addPeerGroup(List<List<NetworkAddress>> peers);

    /**
     * The transport's counts of failed handshakes, refused connections and requests, closed connections and evicted
     * peers, each summed over every NIC; the same categories and reasons in every call. Any thread; allocates the
     * list; meant for metrics and diagnostics, not for the hot path.
     *
     * @return one entry per category and reason the transport counts; empty for a transport without such checks
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
     * @param listener told of each change, on the callback thread
     * @return the watcher; close it to release the slot
     * @throws DeviceUnavailableException if this engine cannot use a GPU, with the reason
     * @throws BackPressureException if every watcher slot is in use (close one, or raise the maximum)
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
