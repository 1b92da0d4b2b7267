package dev.transferengine.spi;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.RegionAccess;
import dev.transferengine.TransportEvent;

import java.lang.foreign.MemorySegment;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One NIC. Single-threaded: every method but {@link #peers()} and {@link #failure()} is called only on the group's
 * worker, which never blocks, so none of them may block. Post calls never fail by exception for transfer problems:
 * they report through the {@link DomainListener}.
 */
public interface Domain extends AutoCloseable {

    /**
     * This NIC's address, which peers resolve to reach it. Any thread.
     *
     * @return the address, named by this transport; fixed for the domain's life
     */
    NetworkAddress address();

    /**
     * A human description, e.g. {@code tcp 127.0.0.1:40123}, ending with the path device memory takes on this NIC
     * (FI_HMEM GPUDirect, staging through pinned host memory) or why it is refused. Any thread.
     *
     * @return the description, for {@link dev.transferengine.NicInfo} and logs
     */
    String description();

    /**
     * Registers memory for local use (the source of writes, the destination of reads) and for what peers may do
     * with it: a domain refuses, with {@link dev.transferengine.exceptions.RemoteAccessException} ({@code
     * NOT_WRITABLE} or {@code NOT_READABLE}), a peer's write or read that {@code access} rules out, leaving the
     * memory untouched. May allocate.
     *
     * @param segment the memory: native host memory, or a segment carrying a device pointer; read-only only for
     *     {@link RegionAccess#READ_ONLY}
     * @param device where the memory lives
     * @param access what peers may do with the memory
     * @return the remote key, unique within this domain, also used as the local handle
     * @throws dev.transferengine.exceptions.DeviceUnavailableException if this domain cannot serve {@code device}
     */
    long register(MemorySegment segment, Device device, RegionAccess access);

    /**
     * Registers memory peers may read and write; {@link #register(MemorySegment, Device, RegionAccess)} with
     * {@link RegionAccess#READ_WRITE}.
     *
     * @param segment the memory: native host memory, or a segment carrying a device pointer
     * @param device where the memory lives
     * @return the remote key, unique within this domain, also used as the local handle
     * @throws dev.transferengine.exceptions.DeviceUnavailableException if this domain cannot serve {@code device}
     */
    default long register(final MemorySegment segment, final Device device) {
        return register(segment, device, RegionAccess.READ_WRITE);
    }

    /**
     * Forgets a region: later remote writes with its key are refused.
     *
     * @param rkey the key {@link #register} returned
     */
    void deregister(long rkey);

    /**
     * A handle for a peer NIC; resolving the same address again returns the same handle. Does not connect. May
     * allocate for a new peer.
     *
     * @param peer the peer NIC's address
     * @return the handle, for {@link WriteDescriptor#target} and {@link #send}
     *
     * @throws dev.transferengine.exceptions.MalformedDescriptorException if the address is not one of this transport's
     */
    long resolve(NetworkAddress peer);

    /**
     * Posts {@code write}, which is reused after the call: a domain copies what it keeps. Its outcome is reported
     * once, through {@link DomainListener#onComplete} or {@link DomainListener#onFailed}.
     *
     * @param write the write, valid only during the call
     */
    void write(WriteDescriptor write);

    /**
     * Posts the pages of one paged write that go to one peer NIC, {@code pages} being reused after the call: a domain
     * copies what it keeps. Each page is a write of its own to the receiver (its own bounds, key and access checks,
     * one imm event if the batch carries an imm), and each page's outcome is reported exactly once, through
     * {@link DomainListener#onComplete} or {@link DomainListener#onFailed} (or their forms that report a run of pages
     * at once); a domain need not refuse or complete the pages together. Like {@link #write}, never fails by exception
     * for transfer problems. Worker thread; must not block; should not allocate on the steady path.
     *
     * <p>The default posts the pages one at a time through {@link #write}, each as {@link PageBatch#page}; a transport
     * that carries many pages in one frame or one doorbell (tcp's PAGES frames) overrides it to save the per-page cost
     * on the sender.
     *
     * @param pages the pages, valid only during the call; at least one
     */
    default void writePages(final PageBatch pages) {
        for (int i = 0; i < pages.count(); i++) {
            write(pages.page(i));
        }
    }

    /**
     * Posts a one-sided read, the write's mirror: {@code read.length()} bytes of the peer's region
     * {@code read.rkey()} at {@code read.remoteBase() + read.remoteOffset()} are copied into the local memory
     * {@code read.src()} at {@code read.srcOffset()} (registered here as {@code read.srcKey()}). A read carries no
     * imm ({@code read.hasImm()} is false) and the peer's application is not told. {@code read} is reused after the
     * call: a domain copies what it keeps. Its outcome is reported once, through {@link DomainListener#onComplete}
     * once every byte is in local memory, or {@link DomainListener#onFailed} (a refusal by the peer is a
     * {@link dev.transferengine.exceptions.RemoteAccessException}).
     *
     * @param read the read, valid only during the call
     */
    void read(WriteDescriptor read);

    /**
     * Posts a two-sided send of the whole {@code message}, which stays untouched until completion. Its outcome is
     * reported once, through {@link DomainListener#onComplete} or {@link DomainListener#onFailed}.
     *
     * @param token the engine's token, handed back in the report
     * @param peer the handle {@link #resolve} returned for the receiving NIC
     * @param message the bytes; the engine keeps the segment alive and unchanged until the report
     */
    void send(long token, long peer, MemorySegment message);

    /**
     * Posts a receive buffer; it comes back through {@link DomainListener#onReceive(long, int)}.
     *
     * @param token the engine's token, handed back with the message
     * @param buffer where one incoming message is placed; owned by the domain until it is reported
     */
    void postReceive(long token, MemorySegment buffer);

    /**
     * Withdraws the receive buffer posted with {@code token}: it takes no message from now on, and the domain forgets
     * the token (nothing will be posted again under it). A posted buffer that no message took comes back through
     * {@link DomainListener#onReceiveWithdrawn}, at once or from a later {@link #poll} where the provider gives it
     * back later (libfabric's {@code fi_cancel}); one a message is landing in comes back through
     * {@link DomainListener#onReceive} as usual. For a buffer not posted here (the application holds it) nothing is
     * reported. Worker thread; never blocks.
     *
     * @param token the token the buffer was posted with
     */
    void withdrawReceive(long token);

    /**
     * Makes progress: posts what is pending, reads completions, reports them. Never blocks; should not allocate on the
     * steady path, since the worker calls it every duty cycle.
     *
     * @return the work done, 0 when idle (the worker's idle strategy then backs off)
     */
    int poll();

    /**
     * Why this domain stopped working. Any thread.
     *
     * @return the reason, or null while healthy
     */
    @Nullable String failure();

    /**
     * The peers this domain knows, with their state. Any thread; may allocate.
     *
     * @return a snapshot
     */
    List<PeerInfo> peers();

    /**
     * Withdraws the operation posted with {@code token}: the engine gave up on it (it timed out). What has not
     * reached the wire yet is dropped without a report; a completion that arrives later for a piece that had left is
     * reported as usual, and the engine ignores it. Called once per domain that holds a piece of the operation, on
     * the worker; must not block.
     *
     * @param token the token the operation's pieces were posted with
     */
    void cancel(long token);

    /**
     * Sends a negative acknowledgement to {@code peer}: an operation of this engine carrying {@code imm} failed here,
     * so up to {@code missing} of its imm events will not reach the peer. The peer's domain reports it once through
     * {@link DomainListener#onImmAbandoned}. A small control message, authenticated as the transport authenticates
     * everything else (a transport that authenticates no peer, fabric, has it carry {@code rkey} as the proof that
     * the sender holds a descriptor of the peer); delivered at most once, best effort (a peer that cannot be reached
     * never hears it, and the sender is not told). Worker thread; never blocks; may allocate (it is rare).
     *
     * <p>The default drops it: on a transport without negative acknowledgements the receiver waits out its own
     * timeout.
     *
     * @param peer the handle {@link #resolve} returned for the receiving NIC
     * @param rkey the remote key, on the receiving NIC, of the region the failed operation wrote
     * @param imm the imm value the failed operation carried
     * @param missing how many of its imm events the sender did not see confirmed, at least 1
     * @param cause the sender's failure, for the receiver's error message; long texts are cut
     */
    default void abandonImm(final long peer, final long rkey, final int imm, final int missing, final String cause) {
        // no control path: the receiver waits out its own timeout
    }

    /**
     * Whether a negative acknowledgement posted through {@link #abandonImm} is still on its way out, e.g. waiting
     * for a connection and its handshake. A closing engine polls for a short while in any case and, while this says
     * true, longer up to a bound. Worker thread; must not allocate.
     *
     * <p>The default, for a transport that cannot tell, says false: closing then polls for the short while only.
     *
     * @return true while an acknowledgement has not left this NIC
     */
    default boolean abandonmentsPending() {
        return false;
    }

    /**
     * Whether work this NIC started still touches {@code segment}'s memory after the region was deregistered: a
     * copy queued into or out of it (tcp staging of device memory), or a write waiting to be copied from it. The
     * engine frees memory it allocated ({@code TransferEngine.allocate}) only once no NIC of its group says true, so
     * nothing it queued can land in, or read from, memory handed to someone else. Worker thread; must not block.
     *
     * <p>The default says false: a transport whose {@link #deregister} already stops every access (an RDMA NIC whose
     * memory registration is closed) has nothing left touching it.
     *
     * @param segment the memory of a region this NIC deregistered
     * @return true while something this NIC queued still reads or writes it
     */
    default boolean touches(final MemorySegment segment) {
        return false;
    }

    /**
     * This NIC's counts of failed handshakes, refused connections and requests, closed connections and evicted peers
     * (see {@link dev.transferengine.TransportEvent}), always the same categories and reasons in the same order.
     * Any thread; allocates the list.
     *
     * @return one entry per category and reason; empty for a transport without such checks
     */
    default List<TransportEvent> events() {
        return List.of();
    }

    /** Closes the NIC. Operations still posted are failed through the listener. */
    @Override
    void close();
}
