package dev.transferengine.spi;

import dev.transferengine.Device;
import dev.transferengine.NetAddr;
import dev.transferengine.PeerInfo;
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

    NetAddr address();

    /** A human description, e.g. {@code tcp 127.0.0.1:40123}. */
    String description();

    /**
     * Registers memory for local use and remote writes.
     *
     * @return the remote key, unique within this domain, also used as the local handle
     * @throws dev.transferengine.DeviceUnavailableException if this domain cannot serve {@code device}
     */
    long register(MemorySegment segment, Device device);

    /** Forgets a region: later remote writes with its key are refused. */
    void deregister(long rkey);

    /**
     * A handle for a peer NIC; resolving the same address again returns the same handle. Does not connect.
     *
     * @throws dev.transferengine.MalformedDescriptorException if the address is not one of this transport's
     */
    long resolve(NetAddr peer);

    /** Posts {@code write}, which is reused after the call: a domain copies what it keeps. */
    void write(WriteDescriptor write);

    /** Posts a two-sided send of the whole {@code message}, which stays untouched until completion. */
    void send(long token, long peer, MemorySegment message);

    /** Posts a receive buffer; it comes back through {@link DomainListener#onReceive(long, int)}. */
    void postReceive(long token, MemorySegment buffer);

    /** Makes progress: posts what is pending, reads completions, reports them. Returns the work done (0 = idle). */
    int poll();

    /** Why this domain stopped working, or null while healthy. Any thread. */
    @Nullable String failure();

    /** The peers this domain knows, with their state. Any thread. */
    List<PeerInfo> peers();

    /**
     * Withdraws the operation posted with {@code token}: the engine gave up on it (it timed out). What has not
     * reached the wire yet is dropped without a report; a completion that arrives later for a piece that had left is
     * reported as usual, and the engine ignores it. Called once per domain that holds a piece of the operation, on
     * the worker; must not block.
     */
    void cancel(long token);

    /**
     * This NIC's counts of failed handshakes, refused connections and requests, closed connections and evicted peers
     * (see {@link dev.transferengine.TransportEvent}), always the same categories and reasons in the same order.
     * Any thread; allocates the list.
     */
    default List<TransportEvent> events() {
        return List.of();
    }

    /** Closes the NIC. Operations still posted are failed through the listener. */
    @Override
    void close();
}
