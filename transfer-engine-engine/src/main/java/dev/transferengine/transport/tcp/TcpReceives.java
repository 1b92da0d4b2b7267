package dev.transferengine.transport.tcp;

import dev.transferengine.spi.DomainListener;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;

import org.jspecify.annotations.Nullable;

/**
 * Posted receive buffers in the order they were posted, shared fairly between the peers connected to the NIC
 * (issue 16, item 6): an incoming SEND takes the first buffer large enough, unless its peer already holds its share
 * and the buffers left are what the other connected peers are still owed. A peer's share is the pool (free buffers
 * plus those peers hold) divided by the connected peers, at least one; a peer holds a buffer from the moment its SEND
 * takes it until the application posts that buffer again (the same token: the engine's pools repost each buffer with
 * its own). A buffer posted under a token no SEND took makes up for the oldest take instead (an application that posts
 * a fresh buffer for each message it handled). Crediting by token matters: a SEND takes its buffer when its header
 * arrives and is handed to the application when its payload is complete, so the order of reposts can differ from the
 * order of takes, and crediting the oldest take would then charge one peer's buffers to another (seen through TLS: a
 * member refused {@code NO_RECEIVE_BUFFER} while the flooder held more than its share). So one member's SEND flood takes
 * the spare buffers and its own share, never the share of another member. Worker thread only.
 */
final class TcpReceives {

    /** One posted buffer. */
    record Posted(long token, TcpMemory memory) {}

    /** One connected peer's account: how many buffers its SENDs took that no repost has made up for yet. */
    static final class Share {
        private int held;
        private boolean connected = true;

        int held() {
            return held;
        }
    }

    private final ArrayDeque<Posted> fifo = new ArrayDeque<>();
    private final ArrayList<Share> shares = new ArrayList<>();
    /** The token of each buffer a connected peer's SEND took and nobody posted again, in the order they were taken. */
    private final LinkedHashMap<Long, Share> taken = new LinkedHashMap<>();

    private int held;

    void post(final long token, final MemorySegment buffer) {
        fifo.addLast(new Posted(token, new TcpMemory(buffer)));
        Share taker = taken.remove(token);
        if (taker == null) {
            final Iterator<Share> oldest = taken.values().iterator();
            if (!oldest.hasNext()) {
                return;
            }
            taker = oldest.next();
            oldest.remove();
        }
        taker.held--;
        held--;
    }

    /**
     * Withdraws the buffer posted under {@code token}, reported to {@code listener} at once; or forgets the SEND that
     * took it, which is not posted again (its message is reported when it landed).
     */
    void withdraw(final long token, final DomainListener listener) {
        final Share taker = taken.remove(token);
        if (taker != null) {
            taker.held--;
            held--;
        } else if (fifo.removeIf(posted -> posted.token() == token)) {
            listener.onReceiveWithdrawn(token);
        }
    }

    /** A peer connected: it gets a share from now on. */
    Share join() {
        final Share share = new Share();
        shares.add(share);
        return share;
    }

    /** A peer's connection closed: its share goes back to the others. */
    void leave(final Share share) {
        if (shares.remove(share)) {
            share.connected = false;
            held -= share.held;
            share.held = 0;
            taken.values().removeIf(taker -> taker == share);
        }
    }

    /**
     * Removes and returns the first posted buffer that holds {@code length} bytes for a SEND of {@code peer}, or null
     * if none does or the peer would take what other peers are owed.
     */
    @Nullable Posted takeFitting(final long length, final Share peer) {
        if (!mayTake(peer)) {
            return null;
        }
        final Posted posted = takeFitting(length);
        if (posted != null && peer.connected) {
            peer.held++;
            held++;
            taken.put(posted.token(), peer);
        }
        return posted;
    }

    /** True if {@code peer} is within its share, or the free buffers exceed what the others are owed. */
    boolean mayTake(final Share peer) {
        final int connected = Math.max(1, shares.size());
        final int fair = Math.max(1, (fifo.size() + held) / connected);
        if (peer.held < fair) {
            return true;
        }
        int owed = 0;
        for (int i = 0; i < shares.size(); i++) {
            final Share other = shares.get(i);
            if (other != peer) {
                owed += Math.max(0, fair - other.held);
            }
        }
        return fifo.size() > owed;
    }

    /** Removes and returns the first posted buffer that holds {@code length} bytes, or null if none does. */
    private @Nullable Posted takeFitting(final long length) {
        final Posted head = fifo.peekFirst();
        if (head == null || head.memory().size() >= length) {
            return fifo.pollFirst();
        }
        for (final Iterator<Posted> it = fifo.iterator(); it.hasNext(); ) {
            final Posted posted = it.next();
            if (posted.memory().size() >= length) {
                it.remove();
                return posted;
            }
        }
        return null;
    }

    /** Size of the largest posted buffer, or -1 if none is posted; for refusal messages. */
    long largest() {
        long largest = -1;
        for (final Posted posted : fifo) {
            largest = Math.max(largest, posted.memory().size());
        }
        return largest;
    }

    int count() {
        return fifo.size();
    }
}
