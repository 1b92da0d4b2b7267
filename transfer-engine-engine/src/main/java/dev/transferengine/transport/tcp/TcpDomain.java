package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.PeerState;
import dev.transferengine.RegionAccess;
import dev.transferengine.TransportEvent;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.DeviceUnavailableException;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RegionBoundsException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.exceptions.TransportUnavailableException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.PageBatch;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.LongSupplier;

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
 * <p>The facade and the selector step: the peers this side resolved and its connections to them live in
 * {@link TcpPeers}, the listening socket, handshakes and the connections peers opened in {@link TcpAcceptor}, and
 * what every socket shares (selector, buffers, identity, per-step work lists) in {@link TcpIo}, and which sockets a
 * poll step reads (select, or the busy connection straight away) in {@link TcpSelection}. This class posts requests,
 * ends them ({@link TcpRequests}) and runs the poll step.
 *
 * <p>Everything but {@link #peers()}, {@link #events()} and {@link #failure()} runs on the group's worker, and
 * nothing blocks: the selector is only polled with {@code selectNow} from {@link #poll()}, and connects are
 * non-blocking. In the steady state posting and polling allocate nothing but one {@link java.nio.ByteBuffer} view
 * per payload larger than the inline threshold (16 KiB); connects, failures and HELLOs allocate.
 */
final class TcpDomain implements Domain, TcpRequests {

    private static final Logger LOG = LoggerFactory.getLogger(TcpDomain.class);
    private static final long SWEEP_INTERVAL_NANOS = 50_000_000L;
    /** The token of ABANDON frames: no engine token (generation << 32 | slot, slots are small) is -1. */
    private static final long ABANDON_TOKEN = -1L;

    private final DomainContext context;
    private final DomainListener listener;
    private final TcpSettings settings;
    private final LongSupplier nanoClock;
    private final TcpCounters counters;
    private final TcpIo io;
    private final TcpPeers peers;
    private final TcpAcceptor acceptor;
    private final NetworkAddress address;
    private final String description;
    private final TcpStaging staging;
    private final TcpRegions regions;
    private final TcpReads reads;
    private final TcpReadServer readServer;

    private final TcpReceives receives = new TcpReceives();
    private final ArrayDeque<TcpOp> opPool = new ArrayDeque<>();
    private final TcpSelection selection;
    private volatile List<PeerInfo> peerSnapshot = List.of();
    private volatile @Nullable String failure;
    private long now;
    private long lastSweep;
    private boolean closed;

    private TcpDomain(
            final DomainContext context,
            final TcpSettings settings,
            final LongSupplier nanoClock,
            final Selector selector,
            final ServerSocketChannel server,
            final TcpBuffers buffers)
            throws IOException {
        this.context = context;
        this.listener = context.listener();
        this.staging = new TcpStaging(context.config());
        this.regions = new TcpRegions(staging);
        this.reads = new TcpReads(listener);
        this.settings = settings;
        this.nanoClock = nanoClock;
        this.now = nanoClock.getAsLong();
        this.lastSweep = now;
        final InetSocketAddress bound = (InetSocketAddress) server.getLocalAddress();
        final InetSocketAddress advertised = bound.getAddress().isAnyLocalAddress()
                ? new InetSocketAddress(InetAddress.getLoopbackAddress(), bound.getPort())
                : bound;
        this.address = TcpAddress.toNetworkAddress(advertised);
        this.description = "tcp " + TcpAddress.describe(advertised);
        this.counters = new TcpCounters(description, nanoClock);
        this.io = new TcpIo(
                selector,
                buffers,
                new TcpIo.Identity(new TcpAuthenticator(settings.keys()), address, description),
                counters,
                context.config().tls(),
                settings);
        this.peers = new TcpPeers(settings.maxPeers(), io, description);
        this.readServer = new TcpReadServer(this, peers, staging);
        this.acceptor = new TcpAcceptor(
                io,
                settings,
                server,
                new TcpAcceptor.Landing(regions, receives, staging, listener, reads, readServer::serve),
                peers,
                this::publishPeers,
                description);
        this.selection = new TcpSelection(io, acceptor, settings, counters, this::fail, description);
    }

    /**
     * Opens the NIC: binds its listening socket to the configured address and port. Without a cluster key only a
     * loopback address may be bound, unless {@code tcp.insecure=true} says the network is trusted.
     *
     * @throws TransportUnavailableException if the socket cannot be bound (port in use, address not local, ...)
     *                                       or a routable address would be bound without a key
     */
    static TcpDomain open(final DomainContext context, final TcpSettings settings, final LongSupplier nanoClock) {
        return open(context, settings, nanoClock, new TcpBuffers());
    }

    /** {@link #open(DomainContext, TcpSettings, LongSupplier)} with connection buffers from {@code buffers}. */
    static TcpDomain open(
            final DomainContext context,
            final TcpSettings settings,
            final LongSupplier nanoClock,
            final TcpBuffers buffers) {
        Selector selector = null;
        ServerSocketChannel server = null;
        try {
            selector = Selector.open();
            server = TcpAcceptor.listen(context, settings, selector);
            return new TcpDomain(context, settings, nanoClock, selector, server, buffers);
        } catch (final IOException e) {
            TcpAcceptor.closeQuietly(server);
            TcpAcceptor.closeQuietly(selector);
            throw new TransportUnavailableException(
                    TcpTransport.NAME,
                    "cannot listen on " + context.config().bindAddress() + ":" + context.port() + " for group "
                            + context.group() + " NIC " + context.nic() + ": " + e,
                    e);
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

    /** Worker thread: staged copies into or out of it, or served reads' READ_DATA sent from it. */
    @Override
    public boolean touches(final MemorySegment segment) {
        return regions.touches(segment);
    }

    /**
     * Worker thread; does not block or connect. Allocates only for a new peer. Beyond {@code tcp.maxPeers} the
     * least recently used peer without a connection is forgotten; its handle then fails its posts as unknown.
     *
     * @throws BackPressureException if every one of {@code tcp.maxPeers} peers is connected
     */
    @Override
    public long resolve(final NetworkAddress peer) {
        final TcpPeer known = peers.find(peer);
        if (known != null) {
            return known.handle();
        }
        TcpAddress.toSocketAddress(peer); // a malformed address fails before the closed check, as it always did
        ensureOpen();
        final TcpPeer added = peers.add(peer, now);
        publishPeers();
        return added.handle();
    }
    /** Worker thread; does not block. Failures are reported through the listener. */
    @Override
    public void write(final WriteDescriptor write) {
        final long token = write.token();
        final MemorySegment src = write.src();
        final long srcOffset = write.srcOffset();
        final long length = write.length();
        final TcpPeer target = targetOf(token, write.peer());
        if (target == null) {
            return;
        }
        if (length < 0 || srcOffset < 0 || srcOffset > src.byteSize() - length) {
            listener.onFailed(token, outsideSource(length, srcOffset, src));
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
     * Worker thread; does not block; allocates nothing once the op pool is warm. Host pages of up to
     * {@value TcpPages#MAX_PAGE} bytes leave as PAGES ops of as many pages as one frame carries: the op copies their
     * offsets, and their bytes are gathered straight into the frame when it is encoded, so a frame costs one op, one
     * imm reservation and one answer however many pages it carries. Pages of device memory (staged) or larger pages
     * go one at a time, through {@link #write}. Failures are reported through the listener, a frame's pages together.
     */
    @Override
    public void writePages(final PageBatch pages) {
        final long token = pages.token();
        final long length = pages.pageLength();
        if (pages.count() == 0) {
            return;
        }
        final TcpMemory source = length == 0 ? null : regions.lookup(pages.srcKey());
        if (length < 0 || length > TcpPages.MAX_PAGE || (source != null && source.device() >= 0)) {
            Domain.super.writePages(pages);
            return;
        }
        final TcpPeer target = targetOf(token, pages.peer(), pages.count());
        if (target == null) {
            return;
        }
        final byte type = pages.hasImm() ? TcpFrame.PAGES_IMM : TcpFrame.PAGES;
        final int room = TcpPageFrames.pagesPerFrame(length);
        final MemorySegment src = pages.src();
        TcpOp op = null;
        for (int i = 0; i < pages.count(); i++) {
            final long at = pages.srcOffset(i);
            if (at < 0 || at > src.byteSize() - length) {
                listener.onFailed(token, outsideSource(length, at, src));
                continue;
            }
            if (op == null) {
                op = acquire().pages(type, pages, room);
            }
            op.addPage(at, pages.remoteOffset(i));
            if (op.pages == room) {
                post(target, op);
                op = null;
            }
        }
        if (op != null) {
            post(target, op);
        }
    }

    private RegionBoundsException outsideSource(final long length, final long offset, final MemorySegment src) {
        return new RegionBoundsException(description + ": write of " + length + " bytes at offset " + offset
                + " falls outside the source of " + src.byteSize() + " bytes");
    }

    /**
     * Worker thread; does not block. Sends a READ to the owner, which streams the bytes back on its own connection
     * to this NIC (see {@link TcpFrame}); the read completes once they all landed. Failures are reported through the
     * listener.
     */
    @Override
    public void read(final WriteDescriptor read) {
        final long token = read.token();
        final TcpPeer target = targetOf(token, read.peer());
        if (target == null) {
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
        final TcpPeer target = targetOf(token, peer);
        if (target == null) {
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

    /** The peer {@code handle} names, or null once {@code token} was failed: the domain closed, or no such peer. */
    private @Nullable TcpPeer targetOf(final long token, final long handle) {
        return targetOf(token, handle, 1);
    }

    /** {@link #targetOf(long, long)} for {@code pieces} writes of {@code token}, failed together. */
    private @Nullable TcpPeer targetOf(final long token, final long handle, final int pieces) {
        if (closed) {
            listener.onFailed(token, new EngineClosedException("domain closed"), pieces);
            return null;
        }
        final TcpPeer target = peers.get(handle);
        if (target == null) {
            listener.onFailed(
                    token, new InvalidRequestException(description + ": unknown peer handle " + handle), pieces);
        }
        return target;
    }

    /**
     * Worker thread; does not block. Queues an ABANDON frame on the connection to {@code peer}, behind the requests
     * already queued there; nobody is told whether it arrived. {@code rkey} is not sent: the connection is
     * authenticated.
     */
    @Override
    public void abandonImm(final long peer, final long rkey, final int imm, final int missing, final String cause) {
        final TcpPeer target = closed ? null : peers.get(peer);
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

    @Override
    public void withdrawReceive(final long token) {
        receives.withdraw(token, listener);
    }

    /** Worker thread; never blocks. */
    @Override
    public int poll() {
        if (closed) {
            return 0;
        }
        final long previous = now;
        now = nanoClock.getAsLong();
        int work = io.startStep(now);
        work += io.flushScheduled();
        work += selection.step(now, previous);
        work += staging.poll(this) + acceptor.drainStaged();
        if (now - lastSweep >= SWEEP_INTERVAL_NANOS) {
            lastSweep = now;
            work += acceptor.expire(now) + peers.expire(now, settings);
        }
        // What reading scheduled (answers, resumed writes) is flushed at the start of the next poll, not here: the
        // engine credits what this poll reported as soon as it returns, so an answer's write syscall stays off the
        // path to the user's counter, a reply the user posted leaves before the answer, and each connection's
        // answers to this poll's requests leave in one write. Pending output counts as work: no idling. An ACK held
        // for a reverse ride (TcpFrame.REVERSE_ACK) does not: a worker that spun for it kept the thread that was to
        // post the reply off a loaded core (2-core VM: round trips of ms). It leaves within its bound plus the
        // worker's idle period (BACKOFF spins the first 50 us after work, then parks at most 50 us; SPIN and YIELD
        // poll).
        work += io.flushPending() ? 1 : 0;
        io.releaseClosed();
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
        peers.withdraw(token);
    }

    /** Worker thread: whether a connection still holds frames not yet written, ABANDON frames among them. */
    @Override
    public boolean abandonmentsPending() {
        return peers.unsent();
    }

    /** Worker thread; idempotent. Fails everything posted with {@link EngineClosedException}. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        staging.close(this);
        peers.closeAll();
        acceptor.close();
        reads.failAll(new EngineClosedException("domain closed before the read's bytes arrived"));
        io.clear();
        TcpAcceptor.closeQuietly(io.selector());
    }

    @Override
    public List<TransportEvent> events() {
        return counters.events();
    }

    /** Where placed payloads and completions are reported; for the staging of device writes. */
    DomainListener listener() {
        return listener;
    }

    /** Where served reads go out, and are told when the staging stops them part-way. */
    TcpReadServer readServer() {
        return readServer;
    }

    /** A staged device write or served read ended; a served read's end is nobody's to hear. */
    void stagedEnded(final long token, final long bytes, final @Nullable TransferEngineException error) {
        if (token == TcpReadServer.SERVE_TOKEN) {
            return;
        }
        if (error == null) {
            listener.onComplete(token, bytes);
        } else {
            listener.onFailed(token, error);
        }
    }

    // ---- TcpRequests: our connections' requests end ----

    /** A piece of a staged device write ends in the staging, which completes the write after its last piece. */
    @Override
    public void end(final TcpOp op, final @Nullable TransferEngineException error) {
        if (op.chunk != null) {
            staging.pieceEnded(this, op, error);
            return;
        }
        final long token = op.token;
        final long bytes = op.length;
        final int pieces = op.pages;
        final byte type = op.type;
        final int readId = op.imm;
        final TcpMemory served = op.served;
        release(op);
        if (served != null) {
            served.serveEnded();
        }
        if (TcpFrame.isOwedToPeer(type)) {
            return; // a negative acknowledgement, a served read's bytes or end: best effort, nobody here waits for it
        }
        if (type == TcpFrame.READ) {
            if (error != null) {
                reads.fail(readId, error);
            }
            return; // accepted: the read completes once its READ_DATA landed
        }
        if (pieces > 1) { // the pages of a PAGES frame: answered together
            if (error == null) {
                listener.onComplete(token, bytes, pieces);
            } else {
                listener.onFailed(token, error, pieces);
            }
        } else if (error == null) {
            listener.onComplete(token, bytes);
        } else {
            listener.onFailed(token, error);
        }
    }

    @Override
    public void completed(final long token, final long bytes, final int pieces) {
        listener.onComplete(token, bytes, pieces);
    }

    @Override
    public void release(final TcpOp op) {
        op.clear();
        opPool.addLast(op);
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
        peers.recordIncarnation(peer, peerIncarnation);
    }

    // ---- internals ----

    @Override
    public TcpOp acquire() {
        final TcpOp op = opPool.pollFirst();
        return op != null ? op : new TcpOp();
    }

    /**
     * Queues a piece of a request on the peer's connection, connecting first if needed. A peer with
     * {@code tcp.maxQueuedPerPeer} requests outstanding refuses a new one with back-pressure at its first piece;
     * other peers are not affected. The further pieces of an accepted request (the pages of a paged write, posted in
     * one go), pieces of staged device writes (bounded by the staging chunks) and the frames this side owes the peer
     * ({@link TcpFrame#isOwedToPeer}: ABANDON, a served read's READ_DATA and READ_FAILED) are never refused: a request
     * is refused whole or sent whole, however many pages it has (issue 22), and the bytes of a READ this side accepted
     * are owed to a reader that waits for them (the reader's READs are what the bound limits, on its side). Also posts
     * the pieces of a staged write as they come off the device.
     */
    void post(final TcpPeer peer, final TcpOp op) {
        TcpOutbound outbound = peer.outbound();
        peer.touch(now);
        if (outbound != null
                && outbound.requests() >= settings.maxQueuedPerPeer()
                && op.chunk == null
                && !TcpFrame.isOwedToPeer(op.type)
                && !outbound.continues(op.token)) {
            counters.count(TcpCounter.BACK_PRESSURE);
            end(
                    op,
                    new BackPressureException(description + ": " + outbound.requests() + " requests to " + peer
                            + " are queued or unanswered (" + TcpSettings.MAX_QUEUED_PER_PEER + "); retry later"));
            return;
        }
        if (outbound == null) {
            try {
                outbound = TcpOutbound.connect(
                        io, this, peer, settings.socketBufferBytes(), now + settings.handshakeTimeoutNanos());
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

    /** Staged copies into a device failed: the NIC fails, as its writes into that device can no longer land. */
    void deviceLost(final DeviceUnavailableException cause) {
        fail("a staged copy into the device failed, so no write to its memory can land: " + cause.getMessage());
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
        final ArrayList<PeerInfo> snapshot = new ArrayList<>(peers.size() + acceptor.connections());
        final HashSet<NetworkAddress> listed = new HashSet<>();
        peers.describe(context.group(), context.nic(), snapshot, listed);
        acceptor.describe(context.group(), context.nic(), snapshot, listed);
        peerSnapshot = List.copyOf(snapshot);
    }
}
