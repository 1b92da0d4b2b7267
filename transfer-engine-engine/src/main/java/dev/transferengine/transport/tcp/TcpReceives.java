package dev.transferengine.transport.tcp;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;

import org.jspecify.annotations.Nullable;

/**
 * Posted receive buffers in the order they were posted, shared fairly between the peers connected to the NIC
 * (issue 16, item 6): an incoming SEND takes the first buffer large enough, unless its peer already holds its share
 * and the buffers left are what the other connected peers are still owed. A peer's share is the pool (free buffers
 * plus those peers hold) divided by the connected peers, at least one; a peer holds a buffer from the moment its SEND
 * takes it until the application posts a buffer again, reposts being credited to the peers in the order their SENDs
 * took buffers (an application that reposts after each message it handled). So one member's SEND flood takes the
 * spare buffers and its own share, never the share of another member. Worker thread only.
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
    /** The shares whose SENDs took buffers, in that order; each repost credits the oldest. */
    private final ArrayDeque<Share> takers = new ArrayDeque<>();

    private int held;

    void post(final long token, final MemorySegment buffer) {
        fifo.addLast(new Posted(token, new TcpMemory(buffer)));
        Share taker;
        while ((taker = takers.pollFirst()) != null) {
            if (taker.held > 0) { // else its peer left, and its buffers were given back then
                taker.held--;
                held--;
                return;
            }
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
        final Posted taken = takeFitting(length);
        if (taken != null && peer.connected) {
            peer.held++;
            held++;
            takers.addLast(peer);
        }
        return taken;
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
