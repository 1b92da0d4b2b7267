package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.exceptions.BackPressureException;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The peer NICs one domain resolved, each with the connection this side opened to it. A handle names a slot (low 32
 * bits) and the slot's generation (above), so a handle of a forgotten peer is recognised as stale. At most
 * {@code tcp.maxPeers} are kept: beyond that the least recently used peer without a connection is forgotten. Worker
 * thread only.
 */
final class TcpPeers {

    private static final Logger LOG = LoggerFactory.getLogger(TcpPeers.class);

    private final int maxPeers;
    private final TcpIo io;
    private final String description;
    /** Peers by the low 32 bits of their handle; a slot freed by eviction is reused with a new generation. */
    private final ArrayList<@Nullable TcpPeer> slots = new ArrayList<>();

    private final HashMap<NetworkAddress, TcpPeer> byAddress = new HashMap<>();
    private long generation;

    TcpPeers(final int maxPeers, final TcpIo io, final String description) {
        this.maxPeers = maxPeers;
        this.io = io;
        this.description = description;
    }

    /** The peer resolved for {@code address}, or null. */
    @Nullable TcpPeer find(final NetworkAddress address) {
        return byAddress.get(address);
    }

    /**
     * Adds a peer for {@code address}, used at {@code nowNanos}; allocates.
     *
     * @throws BackPressureException if every one of {@code tcp.maxPeers} peers is connected
     * @throws dev.transferengine.exceptions.MalformedDescriptorException if the address is not a tcp one
     */
    TcpPeer add(final NetworkAddress address, final long nowNanos) {
        final InetSocketAddress socketAddress = TcpAddress.toSocketAddress(address); // a bad address evicts nobody
        final int slot = freeSlot();
        final TcpPeer added = new TcpPeer((++generation << 32) | slot, address, socketAddress);
        added.touch(nowNanos);
        if (slot == slots.size()) {
            slots.add(added);
        } else {
            slots.set(slot, added);
        }
        byAddress.put(address, added);
        return added;
    }

    /** The peer with this handle, or null if it is unknown or was forgotten since. */
    @Nullable TcpPeer get(final long handle) {
        final int slot = (int) handle;
        final TcpPeer peer = slot >= 0 && slot < slots.size() ? slots.get(slot) : null;
        return peer != null && peer.handle() == handle ? peer : null;
    }

    /** Records the incarnation a HELLO or CHALLENGE of {@code peer} announced; logs a restart. */
    void recordIncarnation(final TcpPeer peer, final long peerIncarnation) {
        if (peer.recordIncarnation(peerIncarnation)) {
            io.count(TcpCounter.PEERS_RESTARTED);
            LOG.info(
                    "{}: peer {} restarted (incarnation {} seen, restart #{})",
                    description,
                    peer,
                    Long.toHexString(peerIncarnation),
                    peer.restarts());
        }
    }

    /** Closes the connections to peers whose timeouts expired at {@code nowNanos}; returns how many closed. */
    int expire(final long nowNanos, final TcpSettings settings) {
        int expired = 0;
        for (int i = 0; i < slots.size(); i++) { // indexed: an iterator per sweep was the data path's garbage
            final TcpOutbound outbound = outboundAt(i);
            if (outbound != null) {
                expired += outbound.expire(nowNanos, settings);
            }
        }
        return expired;
    }

    /** Drops the operation's requests still queued on any connection. */
    void withdraw(final long token) {
        for (int i = 0; i < slots.size(); i++) {
            final TcpOutbound outbound = outboundAt(i);
            if (outbound != null) {
                outbound.withdraw(token);
            }
        }
    }

    /** Whether a connection of ours still holds frames not yet written (queued, encoded, or waiting to connect). */
    boolean unsent() {
        for (int i = 0; i < slots.size(); i++) {
            final TcpOutbound outbound = outboundAt(i);
            if (outbound != null && outbound.unsent()) {
                return true;
            }
        }
        return false;
    }

    /** Closes every connection as the domain closes; what they still held fails. */
    void closeAll() {
        for (final TcpPeer peer : slots) {
            if (peer == null) {
                continue;
            }
            final TcpOutbound outbound = peer.outbound();
            if (outbound != null) {
                peer.outbound(null);
                outbound.closeForShutdown();
            }
        }
    }

    /** Adds every peer's state to {@code snapshot} and its address to {@code listed}. */
    void describe(final int group, final int nic, final List<PeerInfo> snapshot, final Set<NetworkAddress> listed) {
        for (final TcpPeer peer : slots) {
            if (peer != null) {
                snapshot.add(peer.info(group, nic));
                listed.add(peer.address());
            }
        }
    }

    int size() {
        return byAddress.size();
    }

    private @Nullable TcpOutbound outboundAt(final int slot) {
        final TcpPeer peer = slots.get(slot);
        return peer == null ? null : peer.outbound();
    }

    /** A slot for a new peer: a new one below the cap, else the one of the longest idle unconnected peer. */
    private int freeSlot() {
        if (slots.size() < maxPeers) {
            return slots.size();
        }
        TcpPeer oldest = null;
        for (final TcpPeer candidate : slots) {
            if (candidate != null
                    && candidate.outbound() == null
                    && (oldest == null || candidate.lastUsed() - oldest.lastUsed() < 0)) {
                oldest = candidate;
            }
        }
        if (oldest == null) {
            throw new BackPressureException(description + ": all " + maxPeers + " peers (" + TcpSettings.MAX_PEERS
                    + ") have a connection open; none can be forgotten for a new one");
        }
        final int slot = (int) oldest.handle();
        slots.set(slot, null);
        byAddress.remove(oldest.address());
        io.count(TcpCounter.PEERS_EVICTED);
        return slot;
    }
}
