package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.EngineClosedException;
import dev.transferengine.InvalidRequestException;
import dev.transferengine.NetAddr;
import dev.transferengine.PeerInfo;
import dev.transferengine.PeerUnreachableException;
import dev.transferengine.RegionBoundsException;
import dev.transferengine.TransferEngineException;
import dev.transferengine.TransportUnavailableException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.DomainListener;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One virtual NIC of the tcp transport: its own listening socket, its own connections and its own selector, so
 * traffic on different NICs really is unordered. Requests to a peer travel on the connection this domain opened
 * to it (opened on the first post); requests from a peer arrive on the connection the peer opened. Both sides
 * say HELLO first with a random incarnation id, so a restarted peer is recognised. See {@link TcpFrame} for the
 * wire format.
 *
 * <p>Everything but {@link #peers()} and {@link #failure()} runs on the group's worker, and nothing blocks: the
 * selector is only polled with {@code selectNow} from {@link #poll()}, and connects are non-blocking. In the
 * steady state posting and polling allocate nothing but one {@link java.nio.ByteBuffer} view per payload larger
 * than the inline threshold (16 KiB); connects, failures and HELLOs allocate.
 */
final class TcpDomain implements Domain, TcpConnectionContext {

    private static final Logger LOG = LoggerFactory.getLogger(TcpDomain.class);
    private static final int ACCEPTS_PER_POLL = 16;
    private static final int BACKLOG = 128;

    private final DomainContext context;
    private final DomainListener listener;
    private final int socketBufferBytes;
    private final long connectTimeoutNanos;
    private final Selector selector;
    private final ServerSocketChannel server;
    private final NetAddr address;
    private final byte[] addressBytes;
    private final String description;
    private final long incarnation;
    private final TcpStaging staging;
    private final TcpRegions regions;
    private final TcpReceives receives = new TcpReceives();
    private final ArrayList<TcpPeer> peerTable = new ArrayList<>();
    private final HashMap<NetAddr, TcpPeer> peersByAddress = new HashMap<>();
    private final ArrayList<TcpInbound> inbound = new ArrayList<>();
    private final ArrayList<TcpConnection> toFlush = new ArrayList<>();
    private final ArrayDeque<TcpOp> opPool = new ArrayDeque<>();
    private final Consumer<SelectionKey> onSelected = this::onSelected;
    private volatile List<PeerInfo> peerSnapshot = List.of();
    private volatile @Nullable String failure;
    private int selectedWork;
    private int connecting;
    private int malformedConnections;
    private boolean closed;

    private TcpDomain(final DomainContext context, final int socketBufferBytes, final Selector selector,
                      final ServerSocketChannel server, final InetSocketAddress bound) {
        this.context = context;
        this.listener = context.listener();
        this.staging = new TcpStaging(context.config());
        this.regions = new TcpRegions(staging);
        this.socketBufferBytes = socketBufferBytes;
        this.connectTimeoutNanos = context.config().operationTimeout().toNanos();
        this.selector = selector;
        this.server = server;
        final InetSocketAddress advertised = bound.getAddress().isAnyLocalAddress()
            ? new InetSocketAddress(InetAddress.getLoopbackAddress(), bound.getPort())
            : bound;
        this.address = TcpAddress.toNetAddr(advertised);
        this.addressBytes = address.toBytes();
        this.description = "tcp " + TcpAddress.describe(advertised);
        long id;
        do {
            id = new SecureRandom().nextLong();
        } while (id == 0);
        this.incarnation = id;
    }

    /**
     * Opens the NIC: binds its listening socket to the configured address and port.
     *
     * @throws TransportUnavailableException if the socket cannot be bound (port in use, address not local, ...)
     */
    static TcpDomain open(final DomainContext context, final int socketBufferBytes) {
        final String host = context.config().bindAddress();
        Selector selector = null;
        ServerSocketChannel server = null;
        try {
            selector = Selector.open();
            server = ServerSocketChannel.open();
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            if (socketBufferBytes > 0) {
                // Accepted sockets inherit the receive buffer; it must be set before listen for window scaling.
                server.setOption(StandardSocketOptions.SO_RCVBUF, socketBufferBytes);
            }
            server.bind(new InetSocketAddress(InetAddress.getByName(host), context.port()), BACKLOG);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            return new TcpDomain(context, socketBufferBytes, selector, server,
                (InetSocketAddress) server.getLocalAddress());
        } catch (final IOException e) {
            closeQuietly(server);
            closeQuietly(selector);
            throw new TransportUnavailableException(TcpTransport.NAME, "cannot listen on " + host + ":"
                + context.port() + " for group " + context.group() + " NIC " + context.nic() + ": " + e, e);
        }
    }

    @Override
    public NetAddr address() {
        return address;
    }

    @Override
    public String description() {
        return description;
    }

    /** Worker thread; does not block. */
    @Override
    public long register(final MemorySegment segment, final Device device) {
        ensureOpen();
        return regions.register(segment, device);
    }

    /** Worker thread; does not block. Bytes of a write still arriving for the region are discarded. */
    @Override
    public void deregister(final long rkey) {
        regions.deregister(rkey);
    }

    /** Worker thread; does not block or connect. Allocates only for a new peer. */
    @Override
    public long resolve(final NetAddr peer) {
        final TcpPeer known = peersByAddress.get(peer);
        if (known != null) {
            return known.handle();
        }
        final InetSocketAddress socketAddress = TcpAddress.toSocketAddress(peer);
        ensureOpen();
        final TcpPeer added = new TcpPeer(peerTable.size(), peer, socketAddress);
        peerTable.add(added);
        peersByAddress.put(peer, added);
        publishPeers();
        return added.handle();
    }

    /** Worker thread; does not block. Failures are reported through the listener. */
    @Override
    public void write(final long token, final MemorySegment src, final long srcOffset, final long srcKey,
                      final long length, final long peer, final long remoteBase, final long remoteOffset,
                      final long rkey, final boolean hasImm, final int imm) {
        if (closed) {
            listener.onWriteFailed(token, new EngineClosedException("domain closed"));
            return;
        }
        final TcpPeer target = peer(peer);
        if (target == null) {
            listener.onWriteFailed(token, new InvalidRequestException(description + ": unknown peer handle " + peer));
            return;
        }
        if (length < 0 || srcOffset < 0 || srcOffset > src.byteSize() - length) {
            listener.onWriteFailed(token, new RegionBoundsException(description + ": write of " + length
                + " bytes at offset " + srcOffset + " falls outside the source of " + src.byteSize() + " bytes"));
            return;
        }
        final byte type = !hasImm ? TcpFrame.WRITE : length == 0 ? TcpFrame.IMM : TcpFrame.WRITE_IMM;
        final TcpMemory source = length == 0 ? null : regions.lookup(srcKey);
        if (source != null && source.device() >= 0) {
            staging.stageOut(this, target, type, token, source, srcOffset, length, rkey, remoteOffset, imm);
            return;
        }
        post(target, acquire().set(type, token, src, srcOffset, length, rkey, remoteOffset, imm));
    }

    /** Worker thread; does not block. Failures are reported through the listener. */
    @Override
    public void send(final long token, final long peer, final MemorySegment message) {
        if (closed) {
            listener.onSendFailed(token, new EngineClosedException("domain closed"));
            return;
        }
        final TcpPeer target = peer(peer);
        if (target == null) {
            listener.onSendFailed(token, new InvalidRequestException(description + ": unknown peer handle " + peer));
            return;
        }
        if (message.byteSize() > Integer.MAX_VALUE) {
            listener.onSendFailed(token, new InvalidRequestException(description + ": a send carries at most "
                + Integer.MAX_VALUE + " bytes, not " + message.byteSize()));
            return;
        }
        post(target, acquire().set(TcpFrame.SEND, token, message, 0, message.byteSize(), 0, 0, 0));
    }

    /** Worker thread; does not block. Allocates the buffer's view once. */
    @Override
    public void postReceive(final long token, final MemorySegment buffer) {
        if (!closed) {
            receives.post(token, buffer);
        }
    }

    /** Worker thread; never blocks. */
    @Override
    public int poll() {
        if (closed) {
            return 0;
        }
        int work = flushScheduled();
        selectedWork = 0;
        try {
            selector.selectNow(onSelected);
        } catch (final IOException e) {
            fail("selector failed: " + e);
        }
        work += staging.poll(this) + drainStaged();
        work += selectedWork + flushScheduled();
        if (connecting > 0) {
            work += expireConnects();
        }
        return work;
    }

    @Override
    public @Nullable String failure() {
        return failure;
    }

    /** Any thread: a snapshot taken when a peer last changed state. */
    @Override
    public List<PeerInfo> peers() {
        return peerSnapshot;
    }

    /** Worker thread: drops the operation's writes still queued on a connection; sent ones end as usual. */
    @Override
    public void cancel(final long token) {
        for (final TcpPeer peer : peerTable) {
            final TcpOutbound outbound = peer.outbound();
            if (outbound != null) {
                outbound.withdraw(token);
            }
        }
    }

    /** Worker thread; idempotent. Fails everything posted with {@link EngineClosedException}. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        staging.close(this);
        for (final TcpPeer peer : peerTable) {
            final TcpOutbound outbound = peer.outbound();
            if (outbound != null) {
                peer.outbound(null);
                outbound.closeForShutdown();
            }
        }
        for (final TcpInbound connection : inbound) {
            connection.closeChannel();
        }
        inbound.clear();
        toFlush.clear();
        closeQuietly(server);
        closeQuietly(selector);
    }

    /** How often a peer announced a new incarnation after a previous one; for tests and diagnostics. */
    int peerRestarts() {
        int restarts = 0;
        for (final TcpPeer peer : peerTable) {
            restarts += peer.restarts();
        }
        return restarts;
    }

    int malformedConnections() {
        return malformedConnections;
    }

    int port() {
        return server.socket().getLocalPort();
    }

    // ---- for the connections (TcpConnectionContext) ----

    @Override
    public Selector selector() {
        return selector;
    }

    @Override
    public DomainListener listener() {
        return listener;
    }

    @Override
    public @Nullable TcpMemory region(final long rkey) {
        return regions.lookup(rkey);
    }

    @Override
    public TcpReceives receives() {
        return receives;
    }

    @Override
    public long incarnation() {
        return incarnation;
    }

    @Override
    public byte[] addressBytes() {
        return addressBytes;
    }

    @Override
    public void scheduleFlush(final TcpConnection connection) {
        toFlush.add(connection);
    }

    @Override
    public TcpStaging staging() {
        return staging;
    }

    /** A piece of a staged device write ends in the staging, which completes the write after its last piece. */
    @Override
    public void end(final TcpOp op, final @Nullable TransferEngineException error) {
        if (op.chunk != null) {
            staging.pieceEnded(this, op, error);
            return;
        }
        final long token = op.token;
        final long bytes = op.length;
        final boolean send = op.isSend();
        release(op);
        if (error == null) {
            if (send) {
                listener.onSendComplete(token, bytes);
            } else {
                listener.onWriteComplete(token, bytes);
            }
        } else if (send) {
            listener.onSendFailed(token, error);
        } else {
            listener.onWriteFailed(token, error);
        }
    }

    @Override
    public void release(final TcpOp op) {
        op.clear();
        opPool.addLast(op);
    }

    /** A piece of a staged write is off the device: post it. */
    void postStaged(final TcpPeer peer, final TcpOp op) {
        post(peer, op);
    }

    @Override
    public void onConnected(final TcpPeer peer) {
        connecting--;
        peer.state(TcpPeer.CONNECTED, "");
        publishPeers();
    }

    @Override
    public void onOutboundLost(final TcpOutbound outbound, final String reason) {
        final TcpPeer peer = outbound.peer();
        if (peer.outbound() == outbound) {
            peer.outbound(null);
        }
        if (!outbound.writable()) {
            connecting--;
        }
        peer.state(TcpPeer.UNREACHABLE, reason);
        publishPeers();
        LOG.debug("{}: connection to {} lost: {}", description, peer, reason);
    }

    @Override
    public void onOutboundHello(final TcpPeer peer, final NetAddr announced, final long peerIncarnation) {
        if (!announced.equals(peer.address())) {
            LOG.debug("{}: {} announced itself as {}", description, peer, announced);
        }
        recordIncarnation(peer, peerIncarnation);
    }

    @Override
    public String onInboundHello(final NetAddr announced, final long peerIncarnation) {
        final TcpPeer peer = peerTable.get((int) resolve(announced));
        recordIncarnation(peer, peerIncarnation);
        final TcpOutbound outbound = peer.outbound();
        if (outbound != null && outbound.remoteIncarnation() != 0 && outbound.remoteIncarnation() != peerIncarnation) {
            // Our connection still talks to the previous incarnation, which is gone: its requests cannot succeed.
            outbound.lost("peer restarted", null);
        }
        return peer.toString();
    }

    @Override
    public void onInboundClosed(final TcpInbound connection, final String remote, final String reason) {
        inbound.remove(connection);
        LOG.debug("{}: connection from {} closed: {}", description, remote, reason);
    }

    @Override
    public void onMalformed(final String remote, final String what) {
        if (malformedConnections++ == 0) {
            LOG.warn("{}: dropping the connection with {}: {} (further ones are logged at DEBUG)", description,
                remote, what);
        } else {
            LOG.debug("{}: dropping the connection with {}: {}", description, remote, what);
        }
    }

    // ---- internals ----

    private void recordIncarnation(final TcpPeer peer, final long peerIncarnation) {
        if (peer.recordIncarnation(peerIncarnation)) {
            LOG.info("{}: peer {} restarted (incarnation {} seen, restart #{})", description, peer,
                Long.toHexString(peerIncarnation), peer.restarts());
        }
    }

    private void post(final TcpPeer peer, final TcpOp op) {
        TcpOutbound outbound = peer.outbound();
        if (outbound == null) {
            try {
                connecting++;
                outbound = TcpOutbound.connect(this, peer, socketBufferBytes, System.nanoTime() + connectTimeoutNanos);
            } catch (final IOException e) {
                connecting--;
                final String reason = "cannot connect: " + e;
                peer.state(TcpPeer.UNREACHABLE, reason);
                publishPeers();
                end(op, new PeerUnreachableException(peer.address(), peer + ": " + reason, e));
                return;
            }
            peer.outbound(outbound);
            if (outbound.connecting()) {
                peer.state(TcpPeer.CONNECTING, "");
                publishPeers();
            }
        }
        outbound.enqueue(op);
    }

    /** Reports and acknowledges inbound payloads whose copy to the device finished. */
    private int drainStaged() {
        int work = 0;
        // Backwards: a connection that fails while answering removes itself from the list.
        for (int i = inbound.size() - 1; i >= 0; i--) {
            work += inbound.get(i).drainStaged();
        }
        return work;
    }

    private @Nullable TcpPeer peer(final long handle) {
        return handle >= 0 && handle < peerTable.size() ? peerTable.get((int) handle) : null;
    }

    TcpOp acquire() {
        final TcpOp op = opPool.pollFirst();
        return op != null ? op : new TcpOp();
    }

    private int flushScheduled() {
        int work = 0;
        // Flushing can schedule more (an inbound connection resumes reading and answers), so re-read the size.
        for (int i = 0; i < toFlush.size(); i++) {
            final TcpConnection connection = toFlush.get(i);
            try {
                work += connection.flush();
            } catch (final IOException e) {
                connection.lost("write failed: " + e.getMessage(), e);
            } catch (final RuntimeException e) {
                LOG.warn("{}: closing a connection after an unexpected error", description, e);
                connection.lost("internal error: " + e, e);
            }
        }
        toFlush.clear();
        return work;
    }

    private void onSelected(final SelectionKey key) {
        if (!key.isValid()) {
            return;
        }
        if (key.attachment() instanceof TcpConnection connection) {
            try {
                selectedWork += connection.onReady(key.readyOps());
            } catch (final IOException e) {
                connection.lost(e.getMessage() == null ? e.toString() : e.getMessage(), e);
                selectedWork++;
            } catch (final RuntimeException e) {
                LOG.warn("{}: closing a connection after an unexpected error", description, e);
                connection.lost("internal error: " + e, e);
                selectedWork++;
            }
        } else {
            selectedWork += accept();
        }
    }

    private int accept() {
        int accepted = 0;
        while (accepted < ACCEPTS_PER_POLL) {
            final SocketChannel channel;
            try {
                channel = server.accept();
            } catch (final IOException e) {
                if (!server.isOpen()) {
                    fail("listening socket closed: " + e);
                } else {
                    LOG.warn("{}: accept failed: {}", description, e.toString());
                }
                return accepted;
            }
            if (channel == null) {
                return accepted;
            }
            accepted++;
            try {
                TcpConnection.configure(channel, socketBufferBytes);
                inbound.add(new TcpInbound(this, channel));
            } catch (final IOException e) {
                LOG.debug("{}: dropping an accepted connection: {}", description, e.toString());
                closeQuietly(channel);
            }
        }
        return accepted;
    }

    private int expireConnects() {
        final long now = System.nanoTime();
        int expired = 0;
        for (final TcpPeer peer : peerTable) {
            final TcpOutbound outbound = peer.outbound();
            if (outbound != null && outbound.connectExpired(now)) {
                outbound.lost("connect timed out after " + connectTimeoutNanos / 1_000_000 + " ms", null);
                expired++;
            }
        }
        return expired;
    }

    private void fail(final String why) {
        if (failure == null) {
            failure = description + ": " + why;
            LOG.error("{}", failure);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new EngineClosedException(description + ": domain closed");
        }
    }

    private void publishPeers() {
        final ArrayList<PeerInfo> snapshot = new ArrayList<>(peerTable.size());
        for (final TcpPeer peer : peerTable) {
            snapshot.add(peer.info(context.group(), context.nic()));
        }
        peerSnapshot = List.copyOf(snapshot);
    }

    private static void closeQuietly(final @Nullable AutoCloseable closeable) {
        if (closeable != null) {
            try {
                closeable.close();
            } catch (final Exception ignored) {
                // Closing on the way out; the original failure is what matters.
            }
        }
    }
}
