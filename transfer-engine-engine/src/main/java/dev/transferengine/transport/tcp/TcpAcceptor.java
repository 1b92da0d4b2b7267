package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.PeerState;
import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.DomainListener;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The accepting side of one NIC: its listening socket, the handshakes on accepted sockets
 * ({@link TcpPendingHandshakes}, with their own bounds) and the authenticated connections peers opened to it
 * ({@link TcpInbound}, at most {@code tcp.maxInboundConnections}). Plays {@link TcpTargets} for them: requests
 * land in the NIC's regions, receive buffers and staging chunks and are reported to its listener. Worker thread
 * only.
 */
final class TcpAcceptor implements TcpTargets {

    /** What the accepted connections land requests in and report them to; fixed for the NIC's life. */
    record Landing(
            TcpRegions regions,
            TcpReceives receives,
            TcpStaging staging,
            DomainListener listener,
            TcpReads reads,
            ReadServer reader) {}

    /**
     * Streams a checked READ's bytes back to its reader, on this side's own connection to it; false if this side has
     * no room for that connection.
     */
    @FunctionalInterface
    interface ReadServer {
        boolean serveRead(NetworkAddress reader, TcpMemory memory, long offset, long length, int readId);
    }

    private static final Logger LOG = LoggerFactory.getLogger(TcpAcceptor.class);
    private static final int ACCEPTS_PER_POLL = 16;
    private static final int BACKLOG = 128;

    private final TcpIo io;
    private final TcpSettings settings;
    private final ServerSocketChannel server;
    private final Landing landing;
    private final TcpPeers peers;
    /** Told when the set of connected peers changed, so the domain republishes its peer list. */
    private final Runnable peersChanged;

    private final String description;
    private final TcpPendingHandshakes handshakes = new TcpPendingHandshakes();
    private final ArrayList<TcpInbound> inbound = new ArrayList<>();

    TcpAcceptor(
            final TcpIo io,
            final TcpSettings settings,
            final ServerSocketChannel server,
            final Landing landing,
            final TcpPeers peers,
            final Runnable peersChanged,
            final String description) {
        this.io = io;
        this.settings = settings;
        this.server = server;
        this.landing = landing;
        this.peers = peers;
        this.peersChanged = peersChanged;
        this.description = description;
    }

    /**
     * Binds the NIC's listening socket to the configured address and port and registers it for accepts. Without a
     * cluster key only a loopback address may be bound, unless {@code tcp.insecure=true} says the network is trusted.
     *
     * @throws IOException if the socket cannot be bound (port in use, address not local, ...)
     * @throws TransportUnavailableException if a routable address would be bound without a key
     */
    static ServerSocketChannel listen(
            final DomainContext context, final TcpSettings settings, final java.nio.channels.Selector selector)
            throws IOException {
        final String host = context.config().bindAddress();
        final InetAddress bindTo = InetAddress.getByName(host);
        checkKeyPolicy(settings, bindTo, host);
        final ServerSocketChannel server = ServerSocketChannel.open();
        try {
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            if (settings.socketBufferBytes() > 0) {
                // Accepted sockets inherit the receive buffer; it must be set before listen for window scaling.
                server.setOption(StandardSocketOptions.SO_RCVBUF, settings.socketBufferBytes());
            }
            server.bind(new InetSocketAddress(bindTo, context.port()), BACKLOG);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            return server;
        } catch (final IOException | RuntimeException e) {
            server.close();
            throw e;
        }
    }

    private static void checkKeyPolicy(final TcpSettings settings, final InetAddress bindTo, final String host) {
        if (!settings.keys().isEmpty()) {
            return;
        }
        if (!bindTo.isLoopbackAddress() && !settings.insecure()) {
            throw new TransportUnavailableException(
                    TcpTransport.NAME,
                    "refusing to listen on " + host + " without a "
                            + "cluster key: anyone who reaches it could write into registered memory. Set "
                            + TcpSettings.CLUSTER_KEY + " or " + TcpSettings.CLUSTER_KEY_FILE
                            + " (the same on every engine), "
                            + "or " + TcpSettings.INSECURE + "=true on a network you trust completely");
        }
        if (!bindTo.isLoopbackAddress()) {
            LOG.warn(
                    "INSECURE: tcp transport listening on {} without a cluster key ({}=true): any host that "
                            + "reaches this port can write into registered memory and disturb transfers",
                    host,
                    TcpSettings.INSECURE);
        }
    }

    /**
     * Accepts up to a bounded number of new sockets, each starting its handshake with a deadline of
     * {@code handshakeDeadlineNanos}; a source over its bound is closed at once (counted).
     *
     * @return the sockets accepted
     * @throws IOException if the listening socket itself failed
     */
    int accept(final long handshakeDeadlineNanos) throws IOException {
        int accepted = 0;
        while (accepted < ACCEPTS_PER_POLL) {
            final SocketChannel channel;
            try {
                channel = server.accept();
            } catch (final IOException e) {
                if (!server.isOpen()) {
                    throw e;
                }
                LOG.warn("{}: accept failed: {}", description, e.toString());
                return accepted;
            }
            if (channel == null) {
                return accepted;
            }
            accepted++;
            final @Nullable TcpCounter refusal = handshakes.refusal(sourceOf(channel), settings);
            if (refusal != null) {
                io.count(
                        refusal,
                        TcpIo.describeRemote(channel),
                        refusal == TcpCounter.HANDSHAKES_REFUSED
                                ? "already " + settings.maxPendingHandshakes() + " unfinished handshakes ("
                                        + TcpSettings.MAX_PENDING_HANDSHAKES + ")"
                                : "already " + settings.maxHandshakesPerSource()
                                        + " unfinished handshakes from this address ("
                                        + TcpSettings.MAX_HANDSHAKES_PER_SOURCE + ")");
                closeQuietly(channel);
                continue;
            }
            try {
                TcpConnection.configure(channel, settings.socketBufferBytes());
                handshakes.add(new TcpHandshake(io, this, channel, io.hasTls(), handshakeDeadlineNanos));
            } catch (final IOException e) {
                LOG.debug("{}: dropping an accepted connection: {}", description, e.toString());
                closeQuietly(channel);
            } catch (final Error e) { // the policy in TcpDomain.dispatch: this socket closes, the worker carries on
                io.count(TcpCounter.ERROR_CLOSED, TcpIo.describeRemote(channel), "accepting: " + e);
                closeQuietly(channel);
            }
        }
        return accepted;
    }

    /** Closes handshakes and connections whose timeout expired (backwards: each removes itself). */
    int expire(final long nowNanos) {
        int expired = 0;
        for (int i = handshakes.size() - 1; i >= 0; i--) {
            final TcpHandshake handshake = handshakes.get(i);
            if (handshake.expired(nowNanos)) {
                handshake.fail(
                        TcpCounter.HANDSHAKE_TIMEOUT,
                        "no handshake within " + settings.handshakeTimeoutNanos() / 1_000_000 + " ms");
                expired++;
            }
        }
        for (int i = inbound.size() - 1; i >= 0; i--) {
            expired += inbound.get(i).expire(nowNanos, settings);
        }
        return expired;
    }

    /** Reports and acknowledges inbound payloads whose copy to the device finished. */
    int drainStaged() {
        int work = 0;
        // Backwards: a connection that fails while answering removes itself from the list.
        for (int i = inbound.size() - 1; i >= 0; i--) {
            work += inbound.get(i).drainStaged();
        }
        return work;
    }

    /** Adds the peers connected to this NIC that are not in {@code listed} yet, as IDLE: no connection from here. */
    void describe(final int group, final int nic, final List<PeerInfo> snapshot, final Set<NetworkAddress> listed) {
        for (final TcpInbound connection : inbound) {
            if (listed.add(connection.peerAddress())) {
                snapshot.add(new PeerInfo(group, nic, connection.peerAddress(), PeerState.IDLE, ""));
            }
        }
    }

    /** Authenticated connections peers hold open to this NIC. */
    int connections() {
        return inbound.size();
    }

    /** Closes every handshake and connection and the listening socket, as the NIC closes. */
    void close() {
        handshakes.closeAll();
        for (final TcpInbound connection : inbound) {
            connection.closeForShutdown();
        }
        inbound.clear();
        closeQuietly(server);
    }

    // ---- TcpTargets ----

    @Override
    public @Nullable TcpMemory region(final long rkey) {
        return landing.regions().lookup(rkey);
    }

    @Override
    public TcpReceives receives() {
        return landing.receives();
    }

    @Override
    public TcpStaging staging() {
        return landing.staging();
    }

    @Override
    public DomainListener listener() {
        return landing.listener();
    }

    @Override
    public TcpReads reads() {
        return landing.reads();
    }

    @Override
    public boolean serveRead(
            final NetworkAddress reader,
            final TcpMemory memory,
            final long offset,
            final long length,
            final int readId) {
        return landing.reader().serveRead(reader, memory, offset, length, readId);
    }

    /**
     * Turns an authenticated handshake into an inbound connection. Only now may the peer cost buffers, appear in the
     * NIC's peers, or tear down our connection to a previous incarnation of itself.
     */
    @Override
    public void onAuthenticated(
            final TcpHandshake handshake,
            final SocketChannel channel,
            final TcpHandshake.Connector connector,
            final ByteBuffer pipelined) {
        handshakes.remove(handshake);
        final NetworkAddress announced = connector.address();
        final long peerIncarnation = connector.incarnation();
        final String remote =
                TcpAddress.describe(TcpAddress.toSocketAddress(announced)) + " (from " + handshake.remote() + ")";
        if (inbound.size() >= settings.maxInboundConnections()) {
            // Only authenticated connections count here: handshakes have their own bounds, so a flood of them
            // never locks a member out of these slots.
            io.count(
                    TcpCounter.CONNECTIONS_REFUSED,
                    remote,
                    "already " + settings.maxInboundConnections() + " authenticated connections ("
                            + TcpSettings.MAX_INBOUND_CONNECTIONS + ")");
            handshake.close();
            return;
        }
        final TcpTls connectionTls = handshake.tls();
        final boolean requestsFollowed =
                pipelined.hasRemaining() || (connectionTls != null && connectionTls.pendingInput());
        final TcpInbound connection;
        try {
            connection = new TcpInbound(io, this, channel, connectionTls, connector, remote, pipelined);
        } catch (final IOException e) {
            LOG.warn("{}: dropping the authenticated connection from {}: {}", description, remote, e.toString());
            handshake.close();
            return;
        }
        inbound.add(connection);
        try {
            connection.pipelineTls(remote);
        } catch (final IOException e) {
            connection.lost("the TLS socket's thread could not start: " + e, e);
            return;
        }
        final TcpPeer peer = peers.find(announced);
        if (peer != null) {
            peers.recordIncarnation(peer, peerIncarnation);
            final TcpOutbound outbound = peer.outbound();
            if (outbound != null
                    && outbound.remoteIncarnation() != 0
                    && outbound.remoteIncarnation() != peerIncarnation) {
                // Our connection still talks to the previous incarnation, which is gone: its requests cannot succeed.
                outbound.lost("peer restarted", null);
            }
        }
        peersChanged.run();
        if (requestsFollowed) {
            try {
                connection.onReady(SelectionKey.OP_READ);
            } catch (final IOException e) {
                connection.lost(e.toString(), e);
            }
        }
    }

    @Override
    public boolean mayHoldAck(final NetworkAddress peer, final long incarnation) {
        final TcpPeer known = peers.find(peer);
        if (known == null || io.now() - known.lastUsed() >= io.recentRequestNanos()) {
            return false;
        }
        final TcpOutbound outbound = known.outbound();
        return outbound != null && outbound.carriesReverseAcks() && outbound.remoteIncarnation() == incarnation;
    }

    @Override
    public void onReverseAck(
            final NetworkAddress peer, final long connectionId, final long first, final int count, final long bytes) {
        final TcpPeer known = peers.find(peer);
        final TcpOutbound outbound = known == null ? null : known.outbound();
        if (outbound != null && outbound.connectionId() == connectionId) {
            outbound.onReverseAck(first, count, bytes);
        }
    }

    @Override
    public void onHandshakeEnded(final TcpHandshake handshake) {
        handshakes.remove(handshake);
    }

    @Override
    public void onInboundClosed(final TcpInbound connection, final String remote, final String reason) {
        inbound.remove(connection);
        peersChanged.run();
        LOG.debug("{}: connection from {} closed: {}", description, remote, reason);
        // the bytes of our reads from that peer were to come on this connection: what it still owed is lost with it
        landing.reads().failFrom(connection.peerAddress(), "connection from " + remote + " closed: " + reason);
    }

    private static @Nullable InetAddress sourceOf(final SocketChannel channel) {
        try {
            return channel.getRemoteAddress() instanceof InetSocketAddress inet ? inet.getAddress() : null;
        } catch (final IOException e) {
            return null;
        }
    }

    static void closeQuietly(final @Nullable AutoCloseable closeable) {
        if (closeable != null) {
            try {
                closeable.close();
            } catch (final Exception ignored) {
                // Closing on the way out; the original failure is what matters.
            }
        }
    }
}
