package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.DomainListener;

import java.util.Iterator;

import org.agrona.collections.Int2ObjectHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The reads this domain asked peers for and whose bytes have not all landed, by read id. A read goes out as a READ
 * request on our connection to the owner; the owner, once it checked key, bounds and access, answers ACK and streams
 * the bytes back as READ_DATA frames on its own connection to us, which land here only if they name a read we have
 * pending from that very peer and fit inside it. A read that ended (failed, timed out, cancelled) is forgotten at
 * once, so late READ_DATA for it is refused and the memory stays untouched: the fence, as a rekey is for writes. An
 * owner that stops serving a read part-way says so (READ_FAILED), and the read fails with the bytes that landed before
 * in place. Worker thread only.
 */
final class TcpReads {

    /** One read waiting for its bytes. */
    static final class Pending {
        final int id;
        final long token;
        final TcpMemory memory;
        /** Where in {@link #memory} the read's first byte lands. */
        final long at;

        final long length;
        final NetworkAddress peer;
        long received;

        Pending(
                final int id,
                final long token,
                final TcpMemory memory,
                final long at,
                final long length,
                final NetworkAddress peer) {
            this.id = id;
            this.token = token;
            this.memory = memory;
            this.at = at;
            this.length = length;
            this.peer = peer;
        }
    }

    private final Int2ObjectHashMap<Pending> byId = new Int2ObjectHashMap<>();
    private final DomainListener listener;
    private int nextId;

    TcpReads(final DomainListener listener) {
        this.listener = listener;
    }

    /** Starts waiting for {@code length} bytes from {@code peer} into {@code memory} at {@code at}; returns the id. */
    int start(final long token, final TcpMemory memory, final long at, final long length, final NetworkAddress peer) {
        int id;
        do {
            id = nextId++;
        } while (byId.containsKey(id));
        byId.put(id, new Pending(id, token, memory, at, length, peer));
        return id;
    }

    /**
     * The read a READ_DATA frame of {@code length} bytes at {@code offset} within read {@code id} from {@code peer}
     * lands in, or null when no such read is pending from that peer, or the bytes would fall outside it.
     */
    @Nullable Pending landing(final int id, final NetworkAddress peer, final long offset, final long length) {
        final Pending read = byId.get(id);
        if (read == null || !read.peer.equals(peer) || !read.memory.live()) {
            return null;
        }
        // inside the read, and no more than it still waits for (a staged read comes in several frames, in order)
        if (offset < 0
                || length < 0
                || offset > read.length
                || length > read.length - offset
                || length > read.length - read.received) {
            return null;
        }
        return read;
    }

    /** {@code bytes} of read {@code id} are in place; the read completes once all its bytes are. */
    void landed(final int id, final long bytes) {
        final Pending read = byId.get(id);
        if (read == null) {
            return; // ended while its bytes were copied to the device
        }
        read.received += bytes;
        if (read.received >= read.length) {
            byId.remove(id);
            listener.onComplete(read.token, read.length);
        }
    }

    /** The owner refused read {@code id}, or its request could not reach the owner: the read fails, once. */
    void fail(final int id, final TransferEngineException error) {
        final Pending read = byId.remove(id);
        if (read != null) {
            listener.onFailed(read.token, error);
        }
    }

    /**
     * {@code peer} stopped serving read {@code id} part-way for {@code why}: the read fails, once, naming how many of
     * its bytes landed (they stay in place: the destination holds a prefix of the read). Nothing if no such read
     * waits for bytes from that peer (it ended already, or another peer's). Called in order behind the READ_DATA the
     * owner sent before, once their bytes are in place.
     */
    void stopped(final NetworkAddress peer, final int id, final TcpReadFailure why) {
        final Pending read = byId.get(id);
        if (read == null || !read.peer.equals(peer)) {
            return;
        }
        byId.remove(id);
        listener.onFailed(
                read.token,
                new RemoteAccessException(
                        why.reason(),
                        "peer " + peer.describe() + " stopped serving the read of " + read.length
                                + " bytes (into offset " + read.at + " of the local region) after " + read.received
                                + " of them: " + why.explanation() + "; those " + read.received
                                + " bytes are in place, the rest of the destination is untouched"));
    }

    /**
     * The connection {@code peer} streams read bytes on closed ({@code reason}): its reads pending here fail, once,
     * instead of waiting for bytes that were queued on that connection and are lost with it.
     */
    void failFrom(final NetworkAddress peer, final String reason) {
        PeerUnreachableException error = null;
        for (final Iterator<Pending> it = byId.values().iterator(); it.hasNext(); ) {
            final Pending read = it.next();
            if (read.peer.equals(peer)) {
                it.remove();
                if (error == null) { // one cause for all: an exception each would cost a stack trace each
                    error = new PeerUnreachableException(
                            peer, "read from " + peer.describe() + " failed before all its bytes arrived: " + reason);
                }
                listener.onFailed(read.token, error);
            }
        }
    }

    /** The engine gave up on {@code token} (timeout, cancel): its reads are forgotten without a report. */
    void cancel(final long token) {
        byId.values().removeIf(read -> read.token == token);
    }

    /** The domain closes: every pending read fails with {@code error}. */
    void failAll(final TransferEngineException error) {
        for (final Pending read : byId.values()) {
            listener.onFailed(read.token, error);
        }
        byId.clear();
    }

    int pending() {
        return byId.size();
    }
}
