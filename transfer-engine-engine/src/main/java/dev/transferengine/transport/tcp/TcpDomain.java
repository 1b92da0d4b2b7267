package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.PeerState;
import dev.transferengine.RegionAccess;
import dev.transferengine.TransportEvent;
import dev.transferengine.TransportTls;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RegionBoundsException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One virtual NIC of the tcp transport: its own listening socket, its own connections and its own selector, so
 * traffic on different NICs really is unordered. Requests to a peer travel on the connection this domain opened
 * to it (opened on the first post); requests from a peer arrive on the connection the peer opened. Every
 * connection starts with a mutual challenge-response handshake over the cluster key that also carries each side's
 * random incarnation id, so a restarted peer is recognised and an unauthenticated one can neither allocate buffers
 * nor announce an address nor disturb a peer. See {@link TcpFrame} for the wire format and {@link TcpSettings}
 * for the bounds: inbound connections, peers, requests queued per peer, and handshake, frame and idle timeouts,
 * which a sweep every {@value #SWEEP_INTERVAL_NANOS} ns of the poll clock enforces.
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
    private static final long SWEEP_INTERVAL_NANOS = 50_000_000L;
    /** The token of ABANDON frames: no engine token (generation << 32 | slot, slots are small) is -1. */
    private static final long ABANDON_TOKEN = -1L;
    /** The token of READ_DATA frames this side streams back to a reader: no engine operation waits for them. */
    private static final long SERVE_TOKEN = -2L;

    private final DomainContext context;
    private final DomainListener listener;
    private final TcpSettings settings;
    private final LongSupplier nanoClock;
    private final TcpCounters counters;
    private final TcpAuthenticator authenticator;
    private final TcpBuffers buffers = new TcpBuffers();
    private final Selector selector;
    private final ServerSocketChannel server;
    private final NetworkAddress address;
    private final byte[] addressBytes;
    private final String description;
    private final long incarnation;
    private final TcpStaging staging;
    private final TcpRegions regions;
    private final TcpReads reads;
    /** What {@link #serveRead} fills for each READ it serves; worker thread only. */
    private final WriteDescriptor serving = new WriteDescriptor();

    private final TcpReceives receives = new TcpReceives();
    /** Peers by the low 32 bits of their handle; a slot freed by eviction is reused with a new generation. */
    private final ArrayList<@Nullable TcpPeer> peerSlots = new ArrayList<>();

    private final HashMap<NetworkAddress, TcpPeer> peersByAddress = new HashMap<>();
    private final TcpPendingHandshakes handshakes = new TcpPendingHandshakes();
    private final ArrayList<TcpInbound> inbound = new ArrayList<>();
    private final ArrayList<TcpConnection> toFlush = new ArrayList<>();
    /** Closed connections whose buffers go back to the pool after the poll step: nothing touches them then. */
    private final ArrayList<TcpConnection> closedConnections = new ArrayList<>();

    private final ArrayDeque<TcpOp> opPool = new ArrayDeque<>();
    private final Consumer<SelectionKey> onSelected = this::onSelected;
    /** Keys whose TLS holds decrypted bytes after their readiness was handled: read again this poll step. */
    private ArrayList<SelectionKey> readAgain = new ArrayList<>();

    private ArrayList<SelectionKey> readingAgain = new ArrayList<>();
    private final @Nullable TransportTls tls;
    private volatile List<PeerInfo> peerSnapshot = List.of();
    private volatile @Nullable String failure;
    private int selectedWork;
    private long generation;
    private long now;
    private long lastSweep;
    private boolean closed;

    private TcpDomain(
            final DomainContext context,
            final TcpSettings settings,
            final LongSupplier nanoClock,
            final Selector selector,
            final ServerSocketChannel server,
            final InetSocketAddress bound) {
        this.context = context;
        this.listener = context.listener();
        this.staging = new TcpStaging(context.config());
        this.regions = new TcpRegions(staging);
        this.reads = new TcpReads(listener);
        this.settings = settings;
        this.tls = context.config().tls();
        this.nanoClock = nanoClock;
        this.now = nanoClock.getAsLong();
        this.lastSweep = now;
        this.authenticator = new TcpAuthenticator(settings.keys());
        this.selector = selector;
        this.server = server;
        final InetSocketAddress advertised = bound.getAddress().isAnyLocalAddress()
                ? new InetSocketAddress(InetAddress.getLoopbackAddress(), bound.getPort())
                : bound;
        this.address = TcpAddress.toNetworkAddress(advertised);
        this.addressBytes = address.toBytes();
        this.description = "tcp " + TcpAddress.describe(advertised);
        this.counters = new TcpCounters(description, nanoClock);
        long id;
        do {
            id = new SecureRandom().nextLong();
        } while (id == 0);
        this.incarnation = id;
    }

    /**
     * Opens the NIC: binds its listening socket to the configured address and port. Without a cluster key only a
     * loopback address may be bound, unless {@code tcp.insecure=true} says the network is trusted.
     *
     * @throws TransportUnavailableException if the socket cannot be bound (port in use, address not local, ...)
     *                                       or a routable address would be bound without a key
     */
    static TcpDomain open(final DomainContext context, final TcpSettings settings, final LongSupplier nanoClock) {
        final String host = context.config().bindAddress();
        Selector selector = null;
        ServerSocketChannel server = null;
        try {
            final InetAddress bindTo = InetAddress.getByName(host);
            checkKeyPolicy(settings, bindTo, host);
            selector = Selector.open();
            server = ServerSocketChannel.open();
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            if (settings.socketBufferBytes() > 0) {
                // Accepted sockets inherit the receive buffer; it must be set before listen for window scaling.
                server.setOption(StandardSocketOptions.SO_RCVBUF, settings.socketBufferBytes());
            }
            server.bind(new InetSocketAddress(bindTo, context.port()), BACKLOG);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            return new TcpDomain(
                    context, settings, nanoClock, selector, server, (InetSocketAddress) server.getLocalAddress());
        } catch (final IOException e) {
            closeQuietly(server);
            closeQuietly(selector);
            throw new TransportUnavailableException(
                    TcpTransport.NAME,
                    "cannot listen on " + host + ":" + context.port() + " for group " + context.group() + " NIC "
                            + context.nic() + ": " + e,
                    e);
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

    @Override
    public NetworkAddress address() {
        return address;
    }

    @Override
    public String description() {
        return description + " (device memory: " + staging.path() + ")";
    }

    /** Worker thread; does not block. */
    @Override
    public long register(final MemorySegment segment, final Device device, final RegionAccess access) {
        ensureOpen();
        return regions.register(segment, device, access);
    }

    /** Worker thread; does not block. Bytes of a write still arriving for the region are discarded. */
    @Override
    public void deregister(final long rkey) {
        regions.deregister(rkey);
    }

    /**
     * Worker thread; does not block or connect. Allocates only for a new peer. Beyond {@code tcp.maxPeers} the
     * least recently used peer without a connection is forgotten; its handle then fails its posts as unknown.
     *
     * @throws BackPressureException if every one of {@code tcp.maxPeers} peers is connected
     */
    @Override
    public long resolve(final NetworkAddress peer) {
        final TcpPeer known = peersByAddress.get(peer);
        if (known != null) {
            return known.handle();
        }
        final InetSocketAddress socketAddress = TcpAddress.toSocketAddress(peer);
        ensureOpen();
        final int slot = freeSlot();
        final TcpPeer added = new TcpPeer((++generation << 32) | slot, peer, socketAddress);
        added.touch(now);
        if (slot == peerSlots.size()) {
            peerSlots.add(added);
        } else {
            peerSlots.set(slot, added);
        }
        peersByAddress.put(peer, added);
        publishPeers();
        return added.handle();
    }

    /** A slot for a new peer: a new one below the cap, else the one of the longest idle unconnected peer. */
    private int freeSlot() {
        if (peerSlots.size() < settings.maxPeers()) {
            return peerSlots.size();
        }
        TcpPeer oldest = null;
        for (final TcpPeer candidate : peerSlots) {
            if (candidate != null
                    && candidate.outbound() == null
                    && (oldest == null || candidate.lastUsed() - oldest.lastUsed() < 0)) {
                oldest = candidate;
            }
        }
        if (oldest == null) {
            throw new BackPressureException(description + ": all " + settings.maxPeers() + " peers ("
                    + TcpSettings.MAX_PEERS + ") have a connection open; none can be forgotten for a new one");
        }
        final int slot = (int) oldest.handle();
        peerSlots.set(slot, null);
        peersByAddress.remove(oldest.address());
        counters.count(TcpCounter.PEERS_EVICTED);
        return slot;
    }

    /** Worker thread; does not block. Failures are reported through the listener. */
    @Override
    public void write(final WriteDescriptor write) {
        final long token = write.token();
        final MemorySegment src = write.src();
        final long srcOffset = write.srcOffset();
        final long length = write.length();
        if (closed) {
            listener.onFailed(token, new EngineClosedException("domain closed"));
            return;
        }
        final TcpPeer target = peer(write.peer());
        if (target == null) {
            listener.onFailed(
                    token, new InvalidRequestException(description + ": unknown peer handle " + write.peer()));
            return;
        }
        if (length < 0 || srcOffset < 0 || srcOffset > src.byteSize() - length) {
            listener.onFailed(
                    token,
                    new RegionBoundsException(description + ": write of " + length + " bytes at offset " + srcOffset
                            + " falls outside the source of " + src.byteSize() + " bytes"));
            return;
        }
        final byte type = !write.hasImm() ? TcpFrame.WRITE : length == 0 ? TcpFrame.IMM : TcpFrame.WRITE_IMM;
        final TcpMemory source = length == 0 ? null : regions.lookup(write.srcKey());
        if (source != null && source.device() >= 0) {
            staging.stageOut(this, target, type, source, write);
            return;
        }
        post(target, acquire().write(type, write));
    }

    /**
     * Worker thread; does not block. Sends a READ to the owner, which streams the bytes back on its own connection
     * to this NIC (see {@link TcpFrame}); the read completes once they all landed. Failures are reported through the
     * listener.
     */
    @Override
    public void read(final WriteDescriptor read) {
        final long token = read.token();
        if (closed) {
            listener.onFailed(token, new EngineClosedException("domain closed"));
            return;
        }
        final TcpPeer target = peer(read.peer());
        if (target == null) {
            listener.onFailed(token, new InvalidRequestException(description + ": unknown peer handle " + read.peer()));
            return;
        }
        final TcpMemory local = regions.lookup(read.srcKey());
        if (local == null || !local.contains(read.srcOffset(), read.length())) {
            listener.onFailed(
                    token,
                    new RegionBoundsException(description + ": read of " + read.length() + " bytes at offset "
                            + read.srcOffset() + " falls outside the local region registered here"));
            return;
        }
        final int id = reads.start(token, local, read.srcOffset(), read.length(), target.address());
        post(target, acquire().read(read, id));
    }

    /** Worker thread; does not block. Failures are reported through the listener. */
    @Override
    public void send(final long token, final long peer, final MemorySegment message) {
        if (closed) {
            listener.onFailed(token, new EngineClosedException("domain closed"));
            return;
        }
        final TcpPeer target = peer(peer);
        if (target == null) {
            listener.onFailed(token, new InvalidRequestException(description + ": unknown peer handle " + peer));
            return;
        }
        if (message.byteSize() > Integer.MAX_VALUE) {
            listener.onFailed(
                    token,
                    new InvalidRequestException(description + ": a send carries at most " + Integer.MAX_VALUE
                            + " bytes, not " + message.byteSize()));
            return;
        }
        post(target, acquire().send(token, message));
    }

    /**
     * Worker thread; does not block. Queues an ABANDON frame on the connection to {@code peer}, behind the requests
     * already queued there; nobody is told whether it arrived.
     */
    @Override
    public void abandonImm(final long peer, final int imm, final int missing, final String cause) {
        final TcpPeer target = closed ? null : peer(peer);
        if (target == null) {
            return;
        }
        final byte[] text = TcpFrame.abandonCause(cause);
        post(target, acquire().abandon(ABANDON_TOKEN, imm, missing, MemorySegment.ofArray(text)));
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
        now = nanoClock.getAsLong();
        int work = flushScheduled();
        selectedWork = 0;
        try {
            selector.selectNow(onSelected);
        } catch (final IOException e) {
            fail("selector failed: " + e);
        }
        readAgain();
        work += staging.poll(this) + drainStaged();
        work += selectedWork;
        if (now - lastSweep >= SWEEP_INTERVAL_NANOS) {
            lastSweep = now;
            work += expire();
        }
        // What reading scheduled (ACK/NACK answers, resumed writes) is flushed at the start of the next poll, not
        // here: the engine credits the imms and completions this poll reported as soon as it returns, so an answer's
        // write syscall stays off the path to the user's counter, and the next poll can send the answer together
        // with a request the user posted in reply (one write instead of two). Output still pending counts as work,
        // so the worker polls again without idling.
        if (!toFlush.isEmpty()) {
            work++;
        }
        releaseClosed();
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

    /**
     * Worker thread: drops the operation's writes and reads still queued on a connection (sent ones end as usual),
     * and forgets its reads, so bytes arriving for them later are refused and never land.
     */
    @Override
    public void cancel(final long token) {
        reads.cancel(token);
        for (final TcpPeer peer : peerSlots) {
            final TcpOutbound outbound = peer == null ? null : peer.outbound();
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
        handshakes.closeAll();
        for (final TcpPeer peer : peerSlots) {
            if (peer == null) {
                continue;
            }
            final TcpOutbound outbound = peer.outbound();
            if (outbound != null) {
                peer.outbound(null);
                outbound.closeForShutdown();
            }
        }
        for (final TcpInbound connection : inbound) {
            connection.closeForShutdown();
        }
        reads.failAll(new EngineClosedException("domain closed before the read's bytes arrived"));
        inbound.clear();
        toFlush.clear();
        closedConnections.clear();
        closeQuietly(server);
        closeQuietly(selector);
    }

    /** How often a peer announced a new incarnation after a previous one; for tests and diagnostics. */
    int peerRestarts() {
        int restarts = 0;
        for (final TcpPeer peer : peerSlots) {
            restarts += peer == null ? 0 : peer.restarts();
        }
        return restarts;
    }

    /** Any thread. */
    long count(final TcpCounter counter) {
        return counters.get(counter);
    }

    /** Any thread. */
    @Override
    public List<TransportEvent> events() {
        return counters.events();
    }

    /** Every counter by name; any thread. */
    Map<String, Long> counters() {
        return counters.snapshot();
    }

    /** Connections peers hold open to this NIC, handshaking or not; for tests. */
    int inboundConnections() {
        return handshakes.size() + inbound.size();
    }

    /** Connections still in their handshake; for tests. */
    int handshaking() {
        return handshakes.size();
    }

    /** Connection buffers waiting for reuse; for tests. */
    int pooledBuffers() {
        return buffers.free();
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
    public TcpReads reads() {
        return reads;
    }

    /**
     * Streams a checked READ's bytes back to {@code reader} as READ_DATA, through the staging for device memory.
     * Best effort like any write: if the reader cannot be reached its read times out there, and bytes it no longer
     * waits for are refused by it.
     */
    @Override
    public void serveRead(
            final NetworkAddress reader,
            final TcpMemory memory,
            final long offset,
            final long length,
            final int readId) {
        final TcpPeer target;
        try {
            target = peer(resolve(reader));
        } catch (final TransferEngineException e) {
            counters.count(TcpCounter.BACK_PRESSURE);
            return;
        }
        if (target == null) {
            return;
        }
        serving.token(SERVE_TOKEN)
                .source(memory.segment(), offset, 0, length)
                .target(target.handle(), 0, 0, 0)
                .imm(true, readId);
        try {
            if (memory.device() >= 0 && length > 0) {
                staging.stageOut(this, target, TcpFrame.READ_DATA, memory, serving);
            } else {
                post(target, acquire().write(TcpFrame.READ_DATA, serving));
            }
        } finally {
            serving.clear();
        }
    }

    /** A staged device write or served read ended; a served read's end is nobody's to hear. */
    void stagedEnded(final long token, final long bytes, final @Nullable TransferEngineException error) {
        if (token == SERVE_TOKEN) {
            return;
        }
        if (error == null) {
            listener.onComplete(token, bytes);
        } else {
            listener.onFailed(token, error);
        }
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
    public TcpBuffers buffers() {
        return buffers;
    }

    @Override
    public TcpAuthenticator authenticator() {
        return authenticator;
    }

    @Override
    public void count(final TcpCounter counter, final String remote, final String what) {
        counters.count(counter, remote, what);
    }

    @Override
    public @Nullable TcpTls tls(final SocketChannel channel, final @Nullable InetSocketAddress peer)
            throws SSLException {
        if (tls == null) {
            return null;
        }
        final SSLEngine engine = peer == null
                ? tls.context().createSSLEngine()
                : tls.context().createSSLEngine(peer.getHostString(), peer.getPort());
        engine.setUseClientMode(peer != null);
        if (peer == null) {
            engine.setNeedClientAuth(tls.needClientAuth());
        }
        if (!tls.protocols().isEmpty()) {
            engine.setEnabledProtocols(tls.protocols().toArray(String[]::new));
        }
        if (!tls.cipherSuites().isEmpty()) {
            engine.setEnabledCipherSuites(tls.cipherSuites().toArray(String[]::new));
        }
        return new TcpTls(channel, engine);
    }

    @Override
    public void readAgain(final SelectionKey key) {
        readAgain.add(key);
    }

    @Override
    public void onClosed(final TcpConnection connection) {
        closedConnections.add(connection);
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
        final byte type = op.type;
        final int readId = op.imm;
        release(op);
        if (type == TcpFrame.ABANDON || type == TcpFrame.READ_DATA) {
            return; // a negative acknowledgement or a served read's bytes: best effort, nobody here waits for it
        }
        if (type == TcpFrame.READ) {
            if (error != null) {
                reads.fail(readId, error);
            }
            return; // accepted: the read completes once its READ_DATA landed
        }
        if (error == null) {
            listener.onComplete(token, bytes);
        } else {
            listener.onFailed(token, error);
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
        peer.state(PeerState.CONNECTED, "");
        publishPeers();
    }

    @Override
    public void onOutboundLost(final TcpOutbound outbound, final String reason) {
        final TcpPeer peer = outbound.peer();
        if (peer.outbound() == outbound) {
            peer.outbound(null);
        }
        peer.state(PeerState.UNREACHABLE, reason);
        peer.touch(now);
        publishPeers();
        LOG.debug("{}: connection to {} lost: {}", description, peer, reason);
    }

    @Override
    public void onOutboundIdle(final TcpOutbound outbound) {
        final TcpPeer peer = outbound.peer();
        if (peer.outbound() == outbound) {
            peer.outbound(null);
        }
        peer.state(PeerState.IDLE, "");
        publishPeers();
    }

    @Override
    public void onOutboundHello(final TcpPeer peer, final long peerIncarnation) {
        recordIncarnation(peer, peerIncarnation);
    }

    /**
     * Turns an authenticated handshake into an inbound connection. Only now may the peer cost buffers, appear in
     * {@link #peers()}, or tear down our connection to a previous incarnation of itself.
     */
    @Override
    public void onAuthenticated(
            final TcpHandshake handshake,
            final SocketChannel channel,
            final NetworkAddress announced,
            final long peerIncarnation,
            final ByteBuffer pipelined) {
        handshakes.remove(handshake);
        final String remote =
                TcpAddress.describe(TcpAddress.toSocketAddress(announced)) + " (from " + handshake.remote() + ")";
        if (inbound.size() >= settings.maxInboundConnections()) {
            // Only authenticated connections count here: handshakes have their own bounds, so a flood of them
            // never locks a member out of these slots.
            counters.count(
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
            connection = new TcpInbound(this, channel, connectionTls, announced, remote, pipelined);
        } catch (final IOException e) {
            LOG.warn("{}: dropping the authenticated connection from {}: {}", description, remote, e.toString());
            handshake.close();
            return;
        }
        inbound.add(connection);
        final TcpPeer peer = peersByAddress.get(announced);
        if (peer != null) {
            recordIncarnation(peer, peerIncarnation);
            final TcpOutbound outbound = peer.outbound();
            if (outbound != null
                    && outbound.remoteIncarnation() != 0
                    && outbound.remoteIncarnation() != peerIncarnation) {
                // Our connection still talks to the previous incarnation, which is gone: its requests cannot succeed.
                outbound.lost("peer restarted", null);
            }
        }
        publishPeers();
        if (requestsFollowed) {
            try {
                selectedWork += connection.onReady(SelectionKey.OP_READ);
            } catch (final IOException e) {
                connection.lost(e.toString(), e);
            }
        }
    }

    @Override
    public void onHandshakeEnded(final TcpHandshake handshake) {
        handshakes.remove(handshake);
    }

    @Override
    public void onInboundClosed(final TcpInbound connection, final String remote, final String reason) {
        inbound.remove(connection);
        publishPeers();
        LOG.debug("{}: connection from {} closed: {}", description, remote, reason);
    }

    // ---- internals ----

    private void recordIncarnation(final TcpPeer peer, final long peerIncarnation) {
        if (peer.recordIncarnation(peerIncarnation)) {
            LOG.info(
                    "{}: peer {} restarted (incarnation {} seen, restart #{})",
                    description,
                    peer,
                    Long.toHexString(peerIncarnation),
                    peer.restarts());
        }
    }

    /**
     * Queues a request on the peer's connection, connecting first if needed. A peer with {@code tcp.maxQueuedPerPeer}
     * requests outstanding refuses more with back-pressure; other peers are not affected.
     */
    private void post(final TcpPeer peer, final TcpOp op) {
        TcpOutbound outbound = peer.outbound();
        peer.touch(now);
        if (outbound != null && outbound.outstanding() >= settings.maxQueuedPerPeer()) {
            counters.count(TcpCounter.BACK_PRESSURE);
            end(
                    op,
                    new BackPressureException(description + ": " + outbound.outstanding() + " requests to " + peer
                            + " are queued or unanswered (" + TcpSettings.MAX_QUEUED_PER_PEER + "); retry later"));
            return;
        }
        if (outbound == null) {
            try {
                outbound = TcpOutbound.connect(
                        this, peer, settings.socketBufferBytes(), now + settings.handshakeTimeoutNanos());
            } catch (final IOException e) {
                final String reason = "cannot connect: " + e;
                peer.state(PeerState.UNREACHABLE, reason);
                publishPeers();
                end(op, new PeerUnreachableException(peer.address(), peer + ": " + reason, e));
                return;
            }
            peer.outbound(outbound);
            if (outbound.connecting()) {
                peer.state(PeerState.CONNECTING, "");
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

    /** The peer with this handle, or null if it is unknown or was forgotten since. */
    private @Nullable TcpPeer peer(final long handle) {
        final int slot = (int) handle;
        final TcpPeer peer = slot >= 0 && slot < peerSlots.size() ? peerSlots.get(slot) : null;
        return peer != null && peer.handle() == handle ? peer : null;
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
            } catch (final SSLException e) {
                lost(connection, e);
            } catch (final IOException e) {
                connection.lost("write failed: " + e.getMessage(), e);
            } catch (final RuntimeException e) {
                LOG.warn("{}: closing a connection after an unexpected error", description, e);
                connection.lost("internal error: " + e, e);
            } catch (final Error e) { // the policy in dispatch: this connection closes, the worker carries on
                counters.count(TcpCounter.ERROR_CLOSED, describeRemote(connection.channel), e.toString());
                connection.lost("internal error: " + e, e);
            }
        }
        toFlush.clear();
        return work;
    }

    private void onSelected(final SelectionKey key) {
        if (key.isValid()) {
            dispatch(key, key.readyOps());
        }
    }

    /** Reads again, once per step, the TLS connections that hold decrypted bytes (each may ask again next step). */
    private void readAgain() {
        if (readAgain.isEmpty()) {
            return;
        }
        final ArrayList<SelectionKey> keys = readAgain;
        readAgain = readingAgain;
        readingAgain = keys;
        for (int i = 0; i < keys.size(); i++) {
            final SelectionKey key = keys.get(i);
            if (key.isValid()) {
                dispatch(key, SelectionKey.OP_READ);
            }
        }
        keys.clear();
    }

    private void dispatch(final SelectionKey key, final int readyOps) {
        if (key.attachment() instanceof TcpHandshake handshake) {
            try {
                selectedWork += handshake.onReady(readyOps);
            } catch (final SSLException e) {
                handshake.fail(TcpCounter.HANDSHAKE_TLS, "TLS failed: " + e.getMessage());
                selectedWork++;
            } catch (final IOException e) {
                handshake.fail(TcpCounter.HANDSHAKE_CLOSED, e.toString());
                selectedWork++;
            } catch (final Error e) {
                // Policy (issue 16, item 2): an Error while serving one socket (an OutOfMemoryError from a flood of
                // TLS handshakes, a StackOverflowError in a provider) closes that socket, which frees what it held,
                // and the worker carries on; left to Agrona's AgentRunner, which rethrows Errors, it would end the
                // worker and every peer's writes with it.
                handshake.fail(TcpCounter.ERROR_CLOSED, "while handshaking: " + e);
                selectedWork++;
            }
        } else if (key.attachment() instanceof TcpConnection connection) {
            try {
                selectedWork += connection.onReady(readyOps);
            } catch (final IOException e) {
                lost(connection, e);
                selectedWork++;
            } catch (final RuntimeException e) {
                LOG.warn("{}: closing a connection after an unexpected error", description, e);
                connection.lost("internal error: " + e, e);
                selectedWork++;
            } catch (final Error e) { // the policy above: this connection closes, the worker carries on
                counters.count(TcpCounter.ERROR_CLOSED, describeRemote(connection.channel), e.toString());
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
            final @Nullable TcpCounter refusal = handshakes.refusal(sourceOf(channel), settings);
            if (refusal != null) {
                counters.count(
                        refusal,
                        describeRemote(channel),
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
                handshakes.add(new TcpHandshake(this, channel, tls != null, now + settings.handshakeTimeoutNanos()));
            } catch (final IOException e) {
                LOG.debug("{}: dropping an accepted connection: {}", description, e.toString());
                closeQuietly(channel);
            } catch (final Error e) { // the policy in dispatch: this socket closes, the worker carries on
                counters.count(TcpCounter.ERROR_CLOSED, describeRemote(channel), "accepting: " + e);
                closeQuietly(channel);
            }
        }
        return accepted;
    }

    /** A connection's socket or TLS failed: TLS failures are counted, as they end handshakes mostly. */
    private void lost(final TcpConnection connection, final IOException e) {
        final String message = e.getMessage() == null ? e.toString() : e.getMessage();
        if (e instanceof SSLException) {
            counters.count(TcpCounter.HANDSHAKE_TLS, describeRemote(connection.channel), message);
            connection.lost("TLS failed: " + message, e);
        } else {
            connection.lost(message, e);
        }
    }

    /** Closes handshakes and connections whose timeout expired (backwards: each removes itself). */
    private int expire() {
        int expired = 0;
        for (int i = handshakes.size() - 1; i >= 0; i--) {
            final TcpHandshake handshake = handshakes.get(i);
            if (handshake.expired(now)) {
                handshake.fail(
                        TcpCounter.HANDSHAKE_TIMEOUT,
                        "no handshake within " + settings.handshakeTimeoutNanos() / 1_000_000 + " ms");
                expired++;
            }
        }
        for (int i = inbound.size() - 1; i >= 0; i--) {
            expired += inbound.get(i).expire(now, settings);
        }
        for (int i = 0; i < peerSlots.size(); i++) { // indexed: an iterator per sweep was the data path's garbage
            final TcpPeer peer = peerSlots.get(i);
            final TcpOutbound outbound = peer == null ? null : peer.outbound();
            if (outbound != null) {
                expired += outbound.expire(now, settings);
            }
        }
        return expired;
    }

    private void releaseClosed() {
        for (int i = 0; i < closedConnections.size(); i++) {
            closedConnections.get(i).releaseBuffers();
        }
        closedConnections.clear();
    }

    private static @Nullable InetAddress sourceOf(final SocketChannel channel) {
        try {
            return channel.getRemoteAddress() instanceof InetSocketAddress inet ? inet.getAddress() : null;
        } catch (final IOException e) {
            return null;
        }
    }

    private static String describeRemote(final SocketChannel channel) {
        try {
            return String.valueOf(channel.getRemoteAddress());
        } catch (final IOException e) {
            return "a closed socket";
        }
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

    /** Resolved peers, then peers connected to us that we never resolved (as IDLE: no connection from here). */
    private void publishPeers() {
        final ArrayList<PeerInfo> snapshot = new ArrayList<>(peersByAddress.size() + inbound.size());
        for (final TcpPeer peer : peerSlots) {
            if (peer != null) {
                snapshot.add(peer.info(context.group(), context.nic()));
            }
        }
        final HashSet<NetworkAddress> listed = new HashSet<>(peersByAddress.keySet());
        for (final TcpInbound connection : inbound) {
            if (listed.add(connection.peerAddress())) {
                snapshot.add(
                        new PeerInfo(context.group(), context.nic(), connection.peerAddress(), PeerState.IDLE, ""));
            }
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
