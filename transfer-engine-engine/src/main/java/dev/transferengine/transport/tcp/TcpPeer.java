package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.PeerState;

import java.net.InetSocketAddress;

import org.jspecify.annotations.Nullable;

/**
 * A peer NIC this domain resolved; its handle names its slot in the domain's peer table and the slot's generation. Holds the
 * one outbound connection this domain uses for its own requests to that peer. Worker thread only.
 */
final class TcpPeer {

    private final long handle;
    private final NetworkAddress address;
    private final InetSocketAddress socketAddress;
    private final String text;
    private @Nullable TcpOutbound outbound;
    private PeerState state = PeerState.IDLE;
    private String lastError = "";
    private long incarnation;
    private int restarts;
    private long lastUsed;

    TcpPeer(final long handle, final NetworkAddress address, final InetSocketAddress socketAddress) {
        this.handle = handle;
        this.address = address;
        this.socketAddress = socketAddress;
        this.text = TcpAddress.describe(socketAddress);
    }

    /** Slot in the low 32 bits, the generation of that slot above. */
    long handle() {
        return handle;
    }

    /** Marks the peer used at {@code nowNanos}: the least recently used is forgotten first. */
    void touch(final long nowNanos) {
        lastUsed = nowNanos;
    }

    long lastUsed() {
        return lastUsed;
    }

    NetworkAddress address() {
        return address;
    }

    InetSocketAddress socketAddress() {
        return socketAddress;
    }

    @Nullable TcpOutbound outbound() {
        return outbound;
    }

    void outbound(final @Nullable TcpOutbound outbound) {
        this.outbound = outbound;
    }

    PeerState state() {
        return state;
    }

    void state(final PeerState state, final String lastError) {
        this.state = state;
        if (!lastError.isEmpty()) {
            this.lastError = lastError;
        }
    }

    String lastError() {
        return lastError;
    }

    /**
     * Records the incarnation a HELLO announced.
     *
     * @return true if it differs from a previously recorded one, i.e. the peer restarted
     */
    boolean recordIncarnation(final long announced) {
        final boolean restarted = incarnation != 0 && incarnation != announced;
        if (restarted) {
            restarts++;
        }
        incarnation = announced;
        return restarted;
    }

    long incarnation() {
        return incarnation;
    }

    int restarts() {
        return restarts;
    }

    PeerInfo info(final int group, final int nic) {
        return new PeerInfo(group, nic, address, state, lastError);
    }

    /** {@code host:port}, for messages. */
    @Override
    public String toString() {
        return text;
    }
}
