package dev.transferengine.core;

import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerGroup;

import java.util.List;

/** A peer group whose addresses group 0's NICs resolved once: {@code handles[peer][nic]}. */
final class ResolvedPeerGroup implements PeerGroup {

    private final Engine engine;
    private final List<List<NetworkAddress>> peers;
    private final long[][] handles;

    ResolvedPeerGroup(final Engine engine, final List<List<NetworkAddress>> peers, final long[][] handles) {
        this.engine = engine;
        this.peers = peers;
        this.handles = handles;
    }

    boolean belongsTo(final Engine owner) {
        return engine == owner;
    }

    long handle(final int peer, final int nic) {
        return handles[peer][nic];
    }

    @Override
    public int size() {
        return peers.size();
    }

    @Override
    public List<List<NetworkAddress>> peers() {
        return peers;
    }

    @Override
    public String toString() {
        return "PeerGroup[" + peers.size() + " peers]";
    }
}
