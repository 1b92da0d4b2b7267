package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.RegionAccess;
import dev.transferengine.TransportEvent;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

import org.agrona.collections.IntArrayQueue;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.LongHashSet;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.transferengine.transport.fabric.FabricLayout.*;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One NIC on libfabric: an RDM endpoint with its CQ and AV ({@link FabricEndpoint}), its regions
 * ({@link FabricRegions}), its peers ({@link FabricPeers}) and a pool of operation slots ({@link FabricOps}).
 *
 * <p>Posting follows the EFA policy of the reference: a new operation is posted once at once (when nothing is
 * queued before it); what the provider turns away with -FI_EAGAIN, and everything queued behind it, waits in a
 * queue that {@link #poll()} works through by at most {@code fabric.postsPerPoll} attempts per call. An operation
 * turned away again goes to the back, so one peer that cannot take work (still connecting, unreachable) never
 * holds up the others: delivery is unordered anyway. {@link #poll()} then reads the CQ in batches of 16: remote CQ
 * data is reserved and consumed at once, since the NIC placed the bytes already, one run of equal imms at a time
 * (below); local completions complete their operation, and errors are read with fi_cq_readerr and reported as typed
 * exceptions. Progress is manual on tcp/shm, so the target must keep polling for writes to land.
 *
 * <p><b>Write chains (shm).</b> shm moves every delivery-complete write of at most 4 KiB by its SAR protocol and,
 * while one is in flight to a peer, turns away every other operation to that peer with -FI_EAGAIN, so a paged write
 * posted delivery-complete page by page moves one page per target progress round trip. Where the provider is shm,
 * {@code fabric.deliveryComplete} is on and the endpoint's msg_order has FI_ORDER_WAW (asked for in
 * {@link FabricDiscovery}), the consecutive writes of one request (or of several: below) to one peer and one remote
 * key are held in a {@link FabricWriteChain} and posted when the next write goes elsewhere or at the next
 * {@link #poll()}: all
 * transmit-complete except the one starting lowest and the one ending highest in the remote region, which go
 * delivery-complete after all the others (only the last one, where every write's range was checked before posting:
 * see the third point below). A chain is posted strictly in that order: where the provider turns a post
 * away, the chain waits and goes on from there, never through {@link #pending}, which rotates turned-away posts to
 * its back. The request still completes only once all its bytes are at the target, and a write the target refuses
 * still fails it:
 * <ul>
 *   <li>shm's target handles a peer's commands in the order they were queued (FI_ORDER_WAW) and places an inline
 *       or inject write's bytes while it handles the command (a larger write completes at the initiator only after
 *       the target copied it anyway). So when a delivery-complete write posted after them completes, every earlier
 *       write of the chain has been handled and its bytes placed.</li>
 *   <li>Every write of a chain was checked against the same key, and a key does not come back once its region is
 *       closed (shm asks the keys of us, and {@link FabricRegions} picks random 63-bit ones: odds of 2^-63 per
 *       registration). So a key that was gone when an earlier write was handled is still gone for the
 *       delivery-complete ones handled after it. Where the peer publishes its keys ({@link FabricShmKeys}) no write
 *       with a gone key is posted at all: each is refused before posting with {@link RemoteAccessException}, since
 *       shm answers a refused write never and is stuck toward the peer after it; a peer that publishes none leaves
 *       the delivery-complete ones uncompleted and the engine's operation timeout fails the request.</li>
 *   <li>Every write's remote range lies within [lowest start, highest end], and the target checked both ends
 *       against the key's one region through the delivery-complete writes, so no write of the chain was out of
 *       its bounds. This holds whatever the descriptor said, without relying on the engine's bounds check. Where
 *       the peer publishes its keys and its table holds all of them ({@link FabricShmKeys.View#checksEveryAccess}
 *       when the chain is sealed), every write's key, range and access were checked against the target's own
 *       entry right before its post, so only the chain's last write goes delivery-complete, for the order alone:
 *       one SAR round trip per chain instead of two. (A table that overflows between the seal and the posts
 *       leaves that chain's range to the engine's descriptor check.)</li>
 *   <li>Each write carries its own imm, which shm raises at the target only after it placed that write's bytes,
 *       whatever completion the initiator asked for: what the receiver counts is unchanged.</li>
 * </ul>
 * A chain of one write (a single write, a scatter target) is posted delivery-complete as before; zero-byte writes
 * are never held. Other providers post every write with the same flags: their ordering and refusal reporting
 * differ (efa's ordering depends on the device). tcp;ofi_rxm's target answers a refused write by dropping the
 * connection unread, which fails only the writes still queued or waiting for an acknowledgement (a write without one
 * behind it reports nothing or done), and RxM replaces the connection behind the engine, so a delivery-complete write
 * does not confirm earlier ones that may have gone on the old connection; docs/benchmarks.md, "fabric/tcp paged
 * writes: why the inner pages keep their acknowledgement".
 *
 * <p><b>Chains across requests (shm).</b> Where every write is an inject (below: it completes when its post returns)
 * and the peer publishes its keys in a table that checks every access, writes to one peer and one key join one chain
 * whatever request they belong to, up to {@link FabricWriteChain#LIMIT}, so one delivery-complete write confirms them
 * all; and the chain being built is not posted at {@link #poll()} while a sealed chain to the same peer waits turned
 * away (shm turns every post to a peer away while a delivery-complete write to it is in flight), so what arrives during
 * one round trip goes out behind the next single delivery-complete write. The completions of a chain's injected
 * writes, of all its requests, are held until its delivery-complete write(s) ended ({@link #settle}): shm handles a
 * peer's commands in order and 2.1 completes delivery-complete operations in posting order, so that write's success
 * means every earlier write of the chain was placed; the held completions are then reported, one report per run of
 * one request's writes, before that write's own. Where it failed (a CQ error, a failed or refused post, the endpoint
 * replaced, the domain failed or closed) every held completion fails with an error of the same type that names it
 * ("its pages may have landed"): every path that ends a slot settles its chain first. The published keys matter:
 * every write was checked against the target's entry right before its post, so a write the target would refuse is
 * never queued but fails alone; without them such a write leaves shm stuck toward the peer, and a chain across
 * requests would leave all its requests to the operation timeout instead of one. So larger writes, peers that publish
 * no keys (or more than their table holds) and other providers keep chains of one request. A cancelled request
 * leaves: its held completions are forgotten and its writes not posted yet are taken out, except a delivery-complete
 * write that still confirms other requests' writes: that one is posted, last, and its report is for a token the
 * engine ended (it ignores it).
 *
 * <p><b>Imm runs.</b> Consecutive imm entries read by one {@link #poll()} (its up to 4 batches of 16) that carry the
 * same imm from the same source (the handle fi_cq_readfrom names; one source for all where the provider reports none)
 * form a run: a paged write's pages from one writer. A receive, a control message or a CQ error between them ends the
 * run (the imms read before it are reported before it); completions of this side's writes, reads and sends do not,
 * as they are handled after their batch's imms. A run is reserved with one {@link DomainListener#reserveImms} (a run
 * of one with {@link DomainListener#reserveImm}) and consumed with one {@link DomainListener#onImms} when it ends, at
 * the latest at the end of the poll: the engine takes one stripe lock and at most one place of the unexpected-imm
 * bound for the run, as for tcp's PAGES frame, and handles one event for its imms, each still one imm event. A run is
 * admitted or refused whole, decided once, when it ends: refused where nobody expects its imm and the writer's share
 * (or the bound) has no place left, its imms then dropped and each counted in IMMS_REFUSED. The engine consumes what
 * a poll reported before the next poll, so a later run of an imm admitted before finds its credits and needs no place.
 * Reserved page by page, each page held a place of its own until the engine consumed the pages read with it, so a
 * share with fewer places left than a poll read pages of a new imm admitted its first pages and refused the rest, as
 * many as how the pages fell into polls made it; now one place admits them all. What a user can tell apart is which
 * and how many of a paged write's equal imms are refused: fewer where places are short, and, where other threads take
 * or free places meanwhile, decided at the run's end rather than page by page (both race with them alike); every
 * imm is still credited once or refused and counted once. Likewise a request's inner writes a chain
 * posted as injects (below) are reported in one {@link DomainListener#onComplete(long, long, int)} when the chain's
 * delivery-complete write completed: the engine then handles one event for them, not one per page; what it counts is
 * unchanged.
 *
 * <p><b>Injected inner writes (shm).</b> A chain's transmit-complete writes of at most tx_attr.inject_size bytes go
 * as FI_INJECT without FI_COMPLETION (the endpoint binds its transmit completions FI_SELECTIVE_COMPLETION on shm,
 * and every other post asks for its completion): shm copies such a write into the peer's command queue before
 * the post returns and, without the flag, would have written its transmit completion right then, so it completes
 * when its post returns, with no CQ entry to write, read and look up, and its slot is free at once; its completion is
 * held with the chain (above). The fabtests anchor ({@code fi_rma_bw -o writedata}) pays one CQ entry per write; a
 * page pays none here. The chain's delivery-complete writes still carry their completions, and the request still
 * ends only with them.
 *
 * <p><b>A gone shm peer.</b> libfabric 2.1's shm completes an endpoint's SAR, CMA and delivery-complete operations
 * in posting order from one response queue for all peers, which lives in the endpoint's own shared-memory region
 * and which its peers answer into. A peer killed (or closed) with operations of ours queued to it never answers
 * them, so nothing posted after them completes, to any peer, and no provider call clears that (fi_cancel cancels
 * only receives; fi_av_remove and a new insert of the dead peer leave the queue as it is). When an operation with
 * a piece posted to such a peer is cancelled (the engine's timeout), its pieces fail with
 * {@link PeerUnreachableException} and the endpoint is replaced ({@link FabricEndpoint#replace}): a new endpoint
 * and CQ under the same name (fi_setname), on the same domain and AV. So the address in every descriptor handed
 * out stays valid, and so do the registrations and their keys (they belong to the domain); the SPI sees no change.
 * Before closing the old endpoint the domain counts the replacement in its published keys
 * ({@link FabricShmKeys#replacing}) and takes what peers had queued to it; afterwards every write, read and send
 * the old endpoint held fails (its completion went with it; its bytes may still land) and every receive buffer is
 * posted again on the new one, so each still comes back once. Peers that had mapped the old endpoint reach the new
 * one two ways: one that posts to us sees the count and, once nothing it posted to the old endpoint is outstanding
 * and a completion read took what the old one queued to it, inserts us again first, unless taking our new
 * endpoint's connection request mapped it already ({@link FabricPeers#renew}); one that only receives maps the new
 * endpoint when it announces itself, because the old region's pid is cleared once the new endpoint is enabled
 * (never while the name has no region: 2.1's peer would crash re-mapping it; {@link FabricShmRegion}). A
 * piece still posted to a peer that replaced its endpoint since counts as behind a gone peer too. An endpoint that
 * another endpoint of this process holds in its AV reaches it through its memory, so it is not replaced: that NIC
 * fails as before.
 *
 * <p>Single-threaded: only the owning worker calls it, except {@link #peers()} and {@link #failure()}. The data
 * path (write, send, postReceive, poll) does not allocate while the slot pool has room.
 */
final class FabricDomain implements Domain {

    private static final Logger LOG = LoggerFactory.getLogger(FabricDomain.class);

    static final long FI_ADDR_UNSPEC = -1L;
    private static final long FI_RECV = 1L << 10;
    private static final long FI_REMOTE_CQ_DATA = 1L << 17;
    static final long FI_COMPLETION = 1L << 24;
    private static final long FI_INJECT = 1L << 25;
    private static final long FI_TRANSMIT_COMPLETE = 1L << 27;
    private static final long FI_DELIVERY_COMPLETE = 1L << 28;
    /** What {@link #post} returns for an access the shm peer's published keys refuse; no libfabric code. */
    private static final long REFUSED_BEFORE_POSTING = Long.MIN_VALUE;

    /** RxM's eager limit unless the environment sets one ({@link #eagerLimit}). */
    private static final long RXM_EAGER = 16_384;

    private static final int CQ_BATCH = 16;
    private static final int CQ_BATCHES_PER_POLL = 4;
    /** At most how many {@link #readCompletions} calls take what peers queued before an endpoint is replaced. */
    private static final int DRAIN_ROUNDS = 8;
    /**
     * At most this long a closing shm domain waits for the endpoints of this process it posted to ({@link
     * #awaitLocalTargets}); a driven one reads within milliseconds, so only a stalled thread meets it.
     */
    private static final long LOCAL_TARGETS_WAIT_NANOS = 5_000_000_000L;
    /** The pause between two looks at those endpoints, leaving the core to their threads. */
    private static final long LOCAL_TARGETS_PAUSE_NANOS = 50_000L;
    /** The first control token of a pool-size message: above every abandonment's buffer index. */
    private static final long POOL_TOKENS = 1L << 32;
    /**
     * Pool-size messages in flight at most: each takes an operation slot until it completes, and questions in
     * strangers' names could otherwise take every slot (a lost question is asked again).
     */
    static final int POOL_MESSAGES = 64;
    /**
     * Peers that this domain resolves at most only to answer their questions (nothing of the engine addressed them):
     * anyone who reaches the endpoint can ask in any address's name, and libfabric's AV only grows.
     */
    static final int MAX_ASKERS = 4096;
    /**
     * {@link #MAX_ASKERS} on shm, whose map of peers has 256 slots, shared by the AV's entries and the peers that post
     * to us; when they are full, 2.1 gives the next peer that posts a slot a live peer holds (smr_map_add goes on past
     * its assert), whose next CMA command then finds a NULL region and ends the process (smr_progress_iov, seen under
     * the fabric-control-flood-shm attack). Strangers must leave most of the slots to real peers.
     */
    static final int SHM_MAX_ASKERS = 64;

    private final FabricEndpoint endpoint;
    private final DomainListener listener;
    private final Arena arena = Arena.ofShared();
    private final FabricRegions regions;
    /** The keys this shm endpoint publishes to its peers ({@link FabricShmKeys}); null elsewhere. */
    private final @Nullable FabricShmKeys keys;
    /** Why the last {@link #post} returned {@link #REFUSED_BEFORE_POSTING}. */
    private @Nullable TransferEngineException refusedBeforePosting;

    private final FabricPeers peers;
    private final FabricOps ops;
    /** The slot of each receive buffer's token, so that {@link #withdrawReceive} finds it without a scan. */
    private final Long2LongHashMap receiveSlots = new Long2LongHashMap(-1);

    private final IntArrayQueue pending = new IntArrayQueue(IntArrayQueue.DEFAULT_NULL_VALUE);
    /** The peers whose process {@link #failIfBehindAGonePeer} looked up this cancel (a lookup reads /proc). */
    private final LongHashSet checkedPeers = new LongHashSet();

    private final MemorySegment entries = arena.allocate(CQE_SIZE * CQ_BATCH, 8);
    /** The source of each entry of {@link #entries} (fi_cq_readfrom), where the provider reports sources. */
    private final MemorySegment sources = arena.allocate(JAVA_LONG, CQ_BATCH);

    /** The entries of the batch being handled that {@link #handleBatch} handles after its imms. */
    private final int[] deferredEntries = new int[CQ_BATCH];

    private final MemorySegment errEntry = arena.allocate(ERR_ENTRY_BYTES, 8);
    private final MemorySegment errText = arena.allocate(512);
    private final int postsPerPoll;
    private final long writeFlags;
    private final long zeroByteWriteFlags;
    /** Whether {@link #cancel} resets the peers of pieces the provider holds: RxM closes their connections. */
    private final boolean resetsConnections;
    /** The longest message {@link #send} posts: RxM's eager limit on RxM providers ({@link #eagerLimit}). */
    private final long largestSend;
    /** Whether writes go through {@link #chain} (shm with FI_ORDER_WAW and delivery-complete writes). */
    private final boolean chained;
    /**
     * The most bytes of a chain's inner write that is posted as an inject without a completion (see the class
     * comment); 0 where transmit completions are not selective.
     */
    private final long chainInjectBytes;

    /** The chain being built from the writes that arrive; it is sealed and posted by {@link #flushChain()}. */
    private FabricWriteChain chain = new FabricWriteChain();
    /** Sealed chains the provider turned a post of away: each is posted on in its own order by {@link #poll()}. */
    private final ArrayDeque<FabricWriteChain> postingChains = new ArrayDeque<>();

    private final ArrayDeque<FabricWriteChain> spareChains = new ArrayDeque<>();
    /**
     * By slot: the chain whose held completions a delivery-complete write confirms, from its seal until it ended
     * ({@link #settle}); null for every other slot.
     */
    private final @Nullable FabricWriteChain[] confirming;
    /** Negative acknowledgements, on tagged endpoints only; null where sends are untagged. */
    private final @Nullable FabricControl control;
    /** Control receive buffers posted now; they are not operations of the engine's. */
    private int controlReceives;

    private boolean toldOfDroppedControl;
    private final NetworkAddress address;
    private final String description;
    private boolean closed;
    /** The receive pools' sizes here and at each peer: a send longer than every pool of its peer is refused. */
    private final FabricPoolSizes pools = new FabricPoolSizes();
    /** Pool-size messages in flight, by their control token (at least {@link #POOL_TOKENS}), kept until sent. */
    private final Long2ObjectHashMap<MemorySegment> poolMessages = new Long2ObjectHashMap<>();

    private long nextPoolToken = POOL_TOKENS;
    /** Peers resolved to answer a question, at most {@link #maxAskers}. */
    private int askers;
    /** {@link #MAX_ASKERS}, or {@link #SHM_MAX_ASKERS} on shm. */
    private final int maxAskers;

    private final FabricControlRefusals refusals;
    /** What a close confirms on RxM providers (with control messages and a close timeout); null elsewhere. */
    private final @Nullable FabricSendConfirmations confirmations;

    private final long closeTimeoutNanos;
    /** What the close left unconfirmed ({@link #confirmSendsDone}). */
    private List<String> unconfirmedAtClose = List.of();

    /**
     * The run of imms read from the CQ and not yet reserved ({@link #reportLandedImms}): how many, all carrying
     * {@link #runImm} from source {@link #runSource} (fi_cq_readfrom's handle; {@link #FI_ADDR_UNSPEC} where the
     * provider reports none).
     */
    private int runImms;

    private int runImm;
    private long runSource;
    /** Bytes of remote writes read from the CQ, not yet counted. */
    private long landedBytes;

    private volatile @Nullable String failure;
    /** Set when replacing the shm endpoint failed half-way: its CQ is closed, so nothing may read it any more. */
    private boolean endpointLost;
    /** fi_cq_read calls made: each takes what peers queued here ({@link FabricPeers#renew} waits for one). */
    private long cqReads;

    /**
     * The transport's settings for a domain: posts tried per poll, the operation table's size, whether writes ask for
     * delivery completion, whether zero-byte writes do too (shm cannot), and how long a close waits at most for peers
     * to confirm sends reported done (RxM providers: {@link FabricSendConfirmations}; 0: it does not ask).
     */
    record Options(
            int postsPerPoll,
            int maxOps,
            boolean deliveryComplete,
            boolean zeroByteDeliveryComplete,
            int closeTimeoutMillis) {}

    FabricDomain(
            final FabricEndpoint endpoint,
            final DomainListener listener,
            final int group,
            final int nic,
            final long caps,
            final Options options) {
        final int postsPerPoll = options.postsPerPoll();
        final int maxOps = options.maxOps();
        final boolean deliveryComplete = options.deliveryComplete();
        final boolean zeroByteDeliveryComplete = options.zeroByteDeliveryComplete();
        this.endpoint = endpoint;
        this.maxAskers = endpoint.isShm() ? SHM_MAX_ASKERS : MAX_ASKERS;
        this.listener = listener;
        this.keys = endpoint.isShm() ? FabricShmKeys.publish(endpoint.name(), arena) : null;
        this.regions = new FabricRegions(endpoint, arena, caps, keys);
        this.peers = new FabricPeers(endpoint, arena, group, nic);
        this.ops = new FabricOps(arena, maxOps, endpoint.tagged());
        this.confirming = new FabricWriteChain[ops.capacity()];
        this.postsPerPoll = postsPerPoll;
        this.writeFlags = FI_COMPLETION | (deliveryComplete ? FI_DELIVERY_COMPLETE : 0);
        this.zeroByteWriteFlags =
                FI_COMPLETION | (deliveryComplete && zeroByteDeliveryComplete ? FI_DELIVERY_COMPLETE : 0);
        this.chained =
                deliveryComplete && endpoint.isShm() && (endpoint.msgOrder() & FabricDiscovery.FI_ORDER_WAW) != 0;
        this.chainInjectBytes = chained && endpoint.selectiveTransmitCompletion() ? endpoint.injectSize() : 0;
        this.resetsConnections =
                resetsConnections(endpoint.provider(), endpoint.library().version());
        this.largestSend = eagerLimit(endpoint.provider(), endpoint.library().version(), System::getenv);
        this.address = FabricAddress.of(endpoint.provider(), endpoint.name());
        this.description = "fabric " + endpoint.provider() + " " + endpoint.domainName() + " (API "
                + FabricLibrary.versionText(endpoint.apiVersion()) + ", mr_mode 0x"
                + Integer.toHexString(endpoint.mrMode())
                + (endpoint.tagged() ? "" : ", untagged sends")
                + ", group " + group + " nic " + nic + (chained ? ", ordered writes" : "") + ")";
        this.refusals = new FabricControlRefusals(description);
        this.control = endpoint.tagged() ? new FabricControl(arena, endpoint.injectSize()) : null;
        endpoint.drivenBy(this::readCompletionsInline);
        if (control != null) {
            for (int i = 0; i < FabricControl.RECEIVES; i++) {
                postControlReceive(control, i);
            }
        }
        this.closeTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(options.closeTimeoutMillis());
        this.confirmations = control != null && endpoint.provider().endsWith(";ofi_rxm") && closeTimeoutNanos > 0
                ? new FabricSendConfirmations()
                : null;
    }

    private void postControlReceive(final FabricControl owner, final int index) {
        final MemorySegment buffer = owner.receiveBuffer(index);
        final int slot = ops.acquire(FabricOps.CONTROL_RECV, index, buffer.byteSize(), FI_ADDR_UNSPEC);
        if (slot < 0) {
            LOG.warn("{}: no operation slot left for a control receive buffer; it is not posted", description);
            return;
        }
        ops.prepareControl(slot, buffer.address(), buffer.byteSize(), localDesc(slot, buffer), FI_ADDR_UNSPEC);
        controlReceives++;
        submit(slot, FI_COMPLETION);
    }

    /**
     * Worker thread. Sends a tagged control message from a buffer of the domain's own, again until the receiver's
     * receipt comes (see {@link FabricControl}); where {@value FabricControl#SENDS} are in flight it waits in the
     * backlog (joining a waiting one of the same peer and imm) and goes as buffers free up ({@link #poll}). Where
     * sends are untagged (shm before libfabric 1.19, which the transport refuses at start) it is dropped and logged
     * once; where the backlog is full ({@value FabricControl#BACKLOG} pairs) it is dropped and logged, each one.
     */
    @Override
    public void abandonImm(final long peer, final long rkey, final int imm, final int missing, final String cause) {
        final FabricControl owner = control;
        if (owner == null || refusal() != null) {
            if (!toldOfDroppedControl) {
                toldOfDroppedControl = true;
                LOG.warn(
                        "{}: a negative acknowledgement for imm {} is dropped ({}); the receiver waits out its own"
                                + " timeout",
                        description,
                        imm,
                        owner == null ? "untagged sends carry none: use libfabric 1.19 or later" : "domain failed");
            }
            return;
        }
        final int index = owner.backlogged() ? -1 : owner.takeSend();
        if (index >= 0) {
            owner.encode(index, peer, address, rkey, imm, missing, cause);
            postAbandonment(owner, index);
        } else if (!owner.queue(peer, rkey, imm, missing, cause)) {
            LOG.warn(
                    "{}: the negative acknowledgement to peer {} for imm {} ({} missing: {}) is dropped: {} others"
                            + " wait to be sent; the receiver waits out its own timeout ({} dropped so far)",
                    description,
                    peers.address(peer),
                    imm,
                    missing,
                    cause,
                    owner.backlog(),
                    owner.droppedAbandonments());
        }
    }

    /** Posts abandonment {@code index} (again); where no slot is free it counts as a post that failed. */
    private void postAbandonment(final FabricControl owner, final int index) {
        final long peer = owner.peer(index);
        final MemorySegment message = owner.post(index);
        final int slot = ops.acquire(FabricOps.CONTROL_SEND, index, FabricControl.MESSAGE_BYTES, peer);
        if (slot < 0) {
            owner.posted(index, System.nanoTime());
            return;
        }
        ops.prepareControl(slot, message.address(), message.byteSize(), localDesc(slot, message), peer);
        submit(slot, FI_COMPLETION);
    }

    /**
     * Worker thread: whether an abandonment waits for its receipt (posts left): a provider may report a message sent
     * that a broken connection lost, so only the receipt says it arrived.
     */
    @Override
    public boolean abandonmentsPending() {
        final FabricControl owner = control;
        return owner != null && owner.sending();
    }

    /** Answers abandonment {@code nonce} from {@code from} with its receipt; best effort (the sender posts again). */
    private void sendReceipt(final FabricControl owner, final NetworkAddress from, final long nonce) {
        final long peer;
        try {
            peer = peers.resolve(from);
        } catch (final RuntimeException e) {
            LOG.debug("{}: no receipt for a negative acknowledgement from {}: {}", description, from, e.getMessage());
            return;
        }
        final int index = owner.takeReceipt(nonce);
        if (index < 0) {
            return;
        }
        final int slot = ops.acquire(FabricOps.CONTROL_SEND, receiptToken(index), 0, peer);
        if (slot < 0) {
            owner.releaseReceipt(index);
            return;
        }
        final MemorySegment message = owner.receipt(index);
        ops.prepareControl(slot, message.address(), message.byteSize(), localDesc(slot, message), peer);
        submit(slot, FI_COMPLETION);
    }

    /** The token of receipt {@code index}'s control send: negative, where an abandonment's is its buffer index. */
    private static long receiptToken(final int index) {
        return -1L - index;
    }

    /** A control send ended (done or failed): frees its receipt buffer, or waits for its abandonment's receipt. */
    private void controlSent(final long token) {
        final FabricControl owner = Objects.requireNonNull(control);
        if (token >= POOL_TOKENS) {
            poolMessages.remove(token);
            if (confirmations != null) {
                confirmations.questionEnded(token, null, peers::address);
            }
        } else if (token < 0) {
            owner.releaseReceipt((int) (-1L - token));
        } else {
            owner.posted((int) token, System.nanoTime());
        }
    }

    /** Posts the abandonments whose receipt is overdue again, then waiting ones into the send buffers free now. */
    private int postOverdueAbandonments() {
        final FabricControl owner = control;
        if (owner == null || !owner.sending()) {
            return 0;
        }
        final long now = System.nanoTime();
        int posted = 0;
        for (int index = owner.overdue(now); index >= 0; index = owner.overdue(now)) {
            postAbandonment(owner, index);
            posted++;
        }
        for (int index = owner.takeWaiting(address); index >= 0; index = owner.takeWaiting(address)) {
            postAbandonment(owner, index);
            posted++;
        }
        return posted;
    }

    @Override
    public NetworkAddress address() {
        return address;
    }

    @Override
    public String description() {
        return description + " (device memory: "
                + (regions.hmem()
                        ? "FI_HMEM GPUDirect"
                        : "refused, the provider offers no FI_HMEM; " + FabricTransport.HMEM_OPTION
                                + "=true asks for it, the tcp transport stages through pinned host memory")
                + ")";
    }

    @Override
    public long register(final MemorySegment segment, final Device device, final RegionAccess access) {
        ensureOpen();
        return regions.register(segment, device, access);
    }

    @Override
    public void deregister(final long rkey) {
        if (!closed) {
            regions.deregister(rkey);
            if (control != null) {
                control.deregistered(rkey);
            }
        }
    }

    @Override
    public long resolve(final NetworkAddress peer) {
        ensureOpen();
        return peers.resolve(peer);
    }

    @Override
    public void write(final WriteDescriptor write) {
        final long token = write.token();
        final long length = write.length();
        final long srcKey = write.srcKey();
        final long peer = write.peer();
        final TransferEngineException refused = refusal();
        if (refused != null) {
            listener.onFailed(token, refused);
            return;
        }
        if (length > 0 && !regions.isRegistered(srcKey)) {
            listener.onFailed(
                    token,
                    new InvalidRequestException("source key " + srcKey + " is not registered on " + description));
            return;
        }
        final int slot = ops.acquire(FabricOps.WRITE, token, length, peer);
        if (slot < 0) {
            listener.onFailed(token, saturated());
            return;
        }
        final long rkey = write.rkey();
        final long remoteAddress = regions.remoteAddress(write.remoteBase(), write.remoteOffset());
        ops.prepareWrite(slot, write, regions.desc(srcKey), peer, remoteAddress);
        final long immFlag = write.hasImm() ? FI_REMOTE_CQ_DATA : 0;
        if (chained) {
            if (length > 0) {
                final boolean spannable = spannable(peer, length);
                if (!chain.accepts(token, peer, rkey, spannable)) {
                    flushChain();
                }
                ops.flags[slot] = immFlag;
                chain.add(slot, token, peer, rkey, remoteAddress, length, spannable);
                return;
            }
            flushChain();
        }
        submit(slot, (length == 0 ? zeroByteWriteFlags : writeFlags) | immFlag);
    }

    /**
     * Whether a write of {@code length} bytes to {@code peer} may share a chain with other requests' writes: it goes
     * as an inject, and the peer publishes its keys and its table checks every access (see the class comment).
     */
    private boolean spannable(final long peer, final long length) {
        if (length > chainInjectBytes) {
            return false;
        }
        final FabricShmKeys.View published = peers.keys(peer);
        return published != null && published.checksEveryAccess();
    }

    /**
     * Posts {@code fi_readmsg}: the peer's provider checks the key, the range and {@code FI_REMOTE_READ}; the
     * completion comes once the bytes are in local memory. Never chained (chains are for writes' delivery order).
     */
    @Override
    public void read(final WriteDescriptor read) {
        final long token = read.token();
        final long length = read.length();
        final long localKey = read.srcKey();
        final long peer = read.peer();
        final TransferEngineException refused = refusal();
        if (refused != null) {
            listener.onFailed(token, refused);
            return;
        }
        if (!regions.isRegistered(localKey)) {
            listener.onFailed(
                    token,
                    new InvalidRequestException(
                            "read destination key " + localKey + " is not registered on " + description));
            return;
        }
        final int slot = ops.acquire(FabricOps.READ, token, length, peer);
        if (slot < 0) {
            listener.onFailed(token, saturated());
            return;
        }
        final long remoteAddress = regions.remoteAddress(read.remoteBase(), read.remoteOffset());
        ops.prepareWrite(slot, read, regions.desc(localKey), peer, remoteAddress);
        flushChain(); // the writes before it keep their order of posting
        submit(slot, FI_COMPLETION);
    }

    /**
     * Seals the chain being built and posts it: transmit-complete first, then the writes that bound its remote range
     * delivery-complete (see the class comment). Its posts never go through {@link #pending}, whose rotation could
     * put a delivery-complete write ahead of a transmit-complete one: a chain the provider turns away waits in
     * {@link #postingChains} and goes on from where it stopped.
     */
    private void flushChain() {
        final int held = chain.size();
        if (held == 0) {
            return;
        }
        final FabricShmKeys.View published = peers.keys(chain.peer());
        chain.seal(published != null && published.checksEveryAccess());
        for (int i = 0; i < held; i++) {
            final int slot = chain.slot(i);
            if (chain.deliveryComplete(i)) {
                ops.flags[slot] |= writeFlags;
                confirming[slot] = chain;
            } else if (ops.length[slot] <= chainInjectBytes) {
                ops.flags[slot] |= FI_INJECT | FI_TRANSMIT_COMPLETE; // no FI_COMPLETION: done when the post returns
                ops.uncounted(slot);
            } else {
                ops.flags[slot] |= FI_COMPLETION | FI_TRANSMIT_COMPLETE;
            }
        }
        final FabricWriteChain sealed = chain;
        final FabricWriteChain spare = spareChains.pollFirst();
        chain = spare == null ? new FabricWriteChain() : spare;
        if (postChain(sealed)) {
            handedOver(sealed);
        } else {
            postingChains.offerLast(sealed);
        }
    }

    /** {@code sealed} is posted no further; it is taken back once its confirmations ended too. */
    private void handedOver(final FabricWriteChain sealed) {
        sealed.handedOver();
        if (sealed.settled()) {
            sealed.clear();
            spareChains.offerLast(sealed);
        }
    }

    /**
     * Ends the confirmation that write {@code slot} gives its chain, if it is a chain's delivery-complete write: with
     * {@code failure} or (null) placed. When it was the chain's last one, the chain's held completions are reported:
     * done where every delivery-complete write was placed, else failed ({@link #unconfirmed}). Called on every path
     * that ends such a slot (completion, error, failed post, withdrawal, replacement, failure and close), before the
     * slot's own report.
     */
    private void settle(final int slot, final @Nullable TransferEngineException failure) {
        final FabricWriteChain sealed = confirming[slot];
        if (sealed == null) {
            return;
        }
        confirming[slot] = null;
        if (!sealed.confirmationEnded(failure)) {
            return;
        }
        final TransferEngineException failed = sealed.confirmationFailure();
        final TransferEngineException error = failed == null ? null : unconfirmed(failed);
        for (int run = 0; run < sealed.runs(); run++) {
            if (error == null) {
                listener.onComplete(sealed.runToken(run), sealed.runBytes(run), sealed.runPieces(run));
            } else {
                listener.onFailed(sealed.runToken(run), error, sealed.runPieces(run));
            }
        }
        sealed.runsReported();
        if (sealed.settled()) {
            sealed.clear();
            spareChains.offerLast(sealed);
        }
    }

    /** The failure of held completions whose delivery-complete write failed with {@code cause}: of its type. */
    private static TransferEngineException unconfirmed(final TransferEngineException cause) {
        final String message = "the delivery-complete write that confirms this request's pages failed: "
                + cause.getMessage() + "; its pages may have landed";
        return switch (cause) {
            case EngineClosedException closedCause -> new EngineClosedException(message);
            case PeerUnreachableException unreachable ->
                new PeerUnreachableException(unreachable.peer(), message, cause);
            case RemoteAccessException refused -> new RemoteAccessException(refused.reason(), message);
            default -> new TransferEngineException(message, cause);
        };
    }

    /**
     * Posts a sealed chain on from where it stopped; true once every write was handed over. One pass counts itself in
     * at the peer's published keys once ({@link FabricShmKeys.View#enter}), each write still checked right before its
     * post, and holds the completions of the inner writes posted as injects in the chain ({@link
     * FabricWriteChain#hold}): shm copied such a write's bytes into the peer's queue before the post returned, where it
     * would have written the same transmit completion at once ({@code smr_generic_rma}), and reports a failure of it
     * as the post's rc. They are reported with the chain's delivery-complete write(s), posted after them ({@link
     * #settle}). A write refused or failed at its post fails alone, as before.
     */
    private boolean postChain(final FabricWriteChain sealed) {
        final long peer = sealed.peer();
        final FabricShmKeys.View published = peers.keys(peer);
        if (published != null) {
            published.enter();
        }
        boolean injected = false;
        try {
            while (sealed.next() < sealed.size()) {
                final int slot = sealed.slot(sealed.next());
                final long rc = post(slot, published);
                if (rc == -FabricFailures.FI_EAGAIN) {
                    return false;
                }
                sealed.advance();
                if (rc < 0) {
                    failPost(slot, rc);
                } else if ((ops.flags[slot] & FI_COMPLETION) == 0) {
                    injected = true;
                    sealed.hold(ops.token[slot], ops.length[slot]);
                    release(slot);
                }
            }
            return true;
        } finally {
            if (published != null) {
                published.exit();
            }
            if (injected) {
                peers.markReachable(peer);
            }
        }
    }

    private int drainChains() {
        int done = 0;
        for (int n = postingChains.size(); n > 0; n--) {
            final FabricWriteChain sealed = postingChains.removeFirst();
            if (postChain(sealed)) {
                handedOver(sealed);
                done++;
            } else {
                postingChains.offerLast(sealed);
            }
        }
        return done;
    }

    @Override
    public void send(final long token, final long peer, final MemorySegment message) {
        final TransferEngineException refused = refusal();
        if (refused != null) {
            listener.onFailed(token, refused);
            return;
        }
        if (message.byteSize() > largestSend) {
            listener.onFailed(token, new InvalidRequestException(aboveEagerLimit(message.byteSize())));
            return;
        }
        final long tag = control == null ? FabricOps.sizeTag(message.byteSize()) : poolTag(token, peer, message);
        if (tag < 0) {
            return;
        }
        final int slot = ops.acquire(FabricOps.SEND, token, message.byteSize(), peer);
        if (slot < 0) {
            listener.onFailed(token, saturated());
            return;
        }
        ops.prepareSend(slot, message.address(), message.byteSize(), localDesc(slot, message), peer, tag);
        submit(slot, FI_COMPLETION);
    }

    /**
     * The tag of a send to {@code peer}, from its pools' sizes ({@link FabricPoolSizes}); -1 when the send was held
     * until they come (the first send to a peer asks for them) or refused, as it fits no pool of the peer.
     */
    private long poolTag(final long token, final long peer, final MemorySegment message) {
        FabricPoolSizes.View view = pools.view(peer);
        if (view == null) {
            view = pools.ask(peer);
            askPoolSizes(peer, view);
        }
        if (!view.settled) {
            view.held.offerLast(new FabricPoolSizes.Held(token, message));
            return -1;
        }
        final long tag = FabricPoolSizes.tag(view, message.byteSize());
        if (tag == FabricPoolSizes.NO_POOL_YET) {
            view.held.offerLast(new FabricPoolSizes.Held(token, message));
            if (!view.awaitingPool) {
                pools.awaitPool(view);
                view.dueAt = System.nanoTime() + FabricControl.retryDelayNanos(FabricControl.ATTEMPTS - 1);
            }
        } else if (tag == FabricPoolSizes.REFUSED) {
            listener.onFailed(
                    token,
                    new RemoteAccessException(
                            RemoteAccessException.Reason.NO_RECEIVE_BUFFER,
                            FabricPoolSizes.refusal(view, message.byteSize(), peers.address(peer))));
            final long now = System.nanoTime();
            if (now - view.dueAt >= 0) { // asks again, at most once a millisecond: a later send sees a pool added since
                view.dueAt = now + FabricControl.retryDelayNanos(0);
                sendPoolMessage(peer, FabricControl.poolQuery(address, view.nonce));
            }
        }
        return tag;
    }

    /** Asks {@code peer} for its pools' sizes (again), until it has had {@value FabricControl#ATTEMPTS} attempts. */
    private void askPoolSizes(final long peer, final FabricPoolSizes.View view) {
        view.attempts++;
        view.dueAt = System.nanoTime() + FabricControl.retryDelayNanos(view.attempts);
        sendPoolMessage(peer, FabricControl.poolQuery(address, view.nonce));
    }

    /**
     * Posts a pool-size message to {@code peer}; best effort (a question is asked again, an answer is asked for).
     * Answers its control token, or -1 where it was not sent.
     */
    private long sendPoolMessage(final long peer, final MemorySegment message) {
        if (poolMessages.size() >= POOL_MESSAGES) {
            refusals.refuse(
                    FabricControlRefusals.Reason.OVERFLOW,
                    "a pool-size message to " + peers.address(peer) + " is not sent: " + POOL_MESSAGES
                            + " are in flight");
            return -1;
        }
        final long token = nextPoolToken++;
        final int slot = ops.acquire(FabricOps.CONTROL_SEND, token, message.byteSize(), peer);
        if (slot < 0) {
            return -1;
        }
        poolMessages.put(token, message);
        ops.prepareControl(slot, message.address(), message.byteSize(), localDesc(slot, message), peer);
        submit(slot, FI_COMPLETION);
        return token;
    }

    /**
     * The sizes of {@code peer}'s pools came (or it never answered: {@code sizes} null, its sends then go by their
     * length): the sends held for them go now.
     */
    private void poolSizesSettled(
            final long peer,
            final FabricPoolSizes.@Nullable View known,
            final int @Nullable [] sizes,
            final long sizesVersion) {
        final FabricPoolSizes.View view;
        if (sizes != null) {
            view = pools.learn(peer, sizes, sizesVersion);
        } else if (known != null) {
            view = known;
            pools.settle(view, true);
            LOG.warn(
                    "{}: {} never told its receive pools' sizes (an older engine?); sends to it are matched by"
                            + " their length, and one longer than the size a pool was asked for may be truncated there",
                    description,
                    peers.address(peer));
        } else {
            return;
        }
        // each held send once: one that waits for a first pool there goes back to the end of the queue
        for (int waiting = view.held.size(); waiting > 0; waiting--) {
            final FabricPoolSizes.Held held = view.held.pollFirst();
            send(held.token(), peer, held.message());
        }
    }

    /** Asks again the peers whose sizes are overdue; gives up on those that had their attempts. */
    private int askOverduePoolSizes() {
        int asked = 0;
        final long now = System.nanoTime();
        for (final var entry : pools.views().entrySet()) {
            final FabricPoolSizes.View view = entry.getValue();
            if (!view.settled && now - view.dueAt >= 0) {
                if (view.attempts >= FabricControl.ATTEMPTS) {
                    poolSizesSettled(entry.getKey(), view, null, -1);
                } else {
                    askPoolSizes(entry.getKey(), view);
                }
                asked++;
            } else if (view.awaitingPool && now - view.dueAt >= 0) {
                if (view.held.isEmpty()) { // the sends that waited ended (timed out, cancelled)
                    pools.stopAwaitingPool(view);
                } else { // the push of its first pool may have been lost with a connection: ask again
                    view.dueAt = now + FabricControl.retryDelayNanos(FabricControl.ATTEMPTS - 1);
                    sendPoolMessage(entry.getKey(), FabricControl.poolQuery(address, view.nonce));
                    asked++;
                }
            }
        }
        return asked;
    }

    @Override
    public void postReceive(final long token, final MemorySegment buffer) {
        if (refusal() != null) {
            return;
        }
        final int slot = ops.acquire(FabricOps.RECV, token, buffer.byteSize(), FI_ADDR_UNSPEC);
        if (slot < 0) {
            LOG.warn("{}: no operation slot left for a receive buffer; it is not posted", description);
            return;
        }
        receiveSlots.put(token, slot);
        final long bytes = buffer.byteSize();
        ops.prepareReceive(slot, buffer.address(), bytes, localDesc(slot, buffer), FI_ADDR_UNSPEC);
        submit(slot, FI_COMPLETION);
        if (control != null && pools.posted(token, bytes)) {
            // the peers that asked hear of the widened class; one that sends meanwhile may be refused (conservative)
            pushPoolSizes();
        }
    }

    /** Tells every peer that asked for this domain's pool sizes what they are now. */
    private void pushPoolSizes() {
        final int[] sizes = pools.advertised();
        pools.subscribers()
                .forEach((peer, nonce) ->
                        sendPoolMessage(peer, FabricControl.poolSizes(address, sizes, pools.version(), nonce)));
    }

    /**
     * Worker thread: a buffer still queued here comes back at once; one the provider holds is cancelled and comes
     * back with its FI_ECANCELED completion, or with its message if one matched it first.
     */
    @Override
    public void withdrawReceive(final long token) {
        if (control != null && pools.withdrawn(token)) {
            // its pool closed and no buffer of its size is left: the peers that asked stop sending that size here
            pushPoolSizes();
        }
        final int slot = (int) receiveSlots.get(token);
        if (slot < 0 || ops.kind[slot] != FabricOps.RECV || ops.token[slot] != token) {
            return;
        }
        if (unqueue(slot)) {
            release(slot);
            listener.onReceiveWithdrawn(token);
        } else {
            final long rc = endpoint.cancel(ops.address(slot));
            if (rc < 0 && rc != -FabricFailures.FI_ENOENT) {
                LOG.warn(
                        "{}: fi_cancel of receive buffer {}: {}",
                        description,
                        token,
                        endpoint.library().describe((int) rc));
            }
        }
    }

    /** Takes {@code slot} out of the posts waiting for the provider; false if it is not among them. */
    private boolean unqueue(final int slot) {
        boolean found = false;
        for (int n = pending.size(); n > 0; n--) {
            final int queued = pending.pollInt();
            if (queued == slot) {
                found = true;
            } else {
                pending.offerInt(queued);
            }
        }
        return found;
    }

    /** The descriptor for a send or receive buffer; registers it for the operation's life where FI_MR_LOCAL asks. */
    private long localDesc(final int slot, final MemorySegment buffer) {
        if (!regions.localRegistration()) {
            return 0;
        }
        final long key = regions.covering(buffer.address(), buffer.byteSize());
        if (key != 0) {
            return regions.desc(key);
        }
        final long temporary = regions.registerLocal(buffer.address(), buffer.byteSize());
        ops.localKey[slot] = temporary;
        return regions.desc(temporary);
    }

    private @Nullable TransferEngineException refusal() {
        if (closed) {
            return new EngineClosedException(description + " is closed");
        }
        final String why = failure;
        return why == null ? null : new TransferEngineException(description + " failed: " + why);
    }

    private TransferEngineException saturated() {
        return new BackPressureException(description + " has " + ops.capacity()
                + " operations outstanding (fabric.maxOps); retry when some complete");
    }

    private void submit(final int slot, final long postFlags) {
        ops.flags[slot] = postFlags;
        if (pending.isEmpty()) {
            final long rc = post(slot);
            if (rc == -FabricFailures.FI_EAGAIN) {
                pending.offerInt(slot);
            } else if (rc < 0) {
                failPost(slot, rc);
            }
        } else {
            pending.offerInt(slot);
        }
    }

    private long post(final int slot) {
        return post(slot, null);
    }

    /**
     * Posts {@code slot}; {@code entered}: the peer's published keys the caller counted itself in at already (a
     * chain's pass), or null.
     */
    private long post(final int slot, final FabricShmKeys.@Nullable View entered) {
        final long rc = postNow(slot, entered);
        if (rc < 0) {
            ops.epoch[slot] = FabricOps.NOT_POSTED;
        }
        return rc;
    }

    /**
     * Posts {@code slot}; to an shm peer that publishes its keys, counted in there ({@link FabricShmKeys.View#enter})
     * from before the check whether the peer replaced its endpoint until the provider queued the command (unless
     * {@code entered}, a chain's pass, counted in already). So a peer that starts replacing its endpoint either is
     * seen to by this post, which then inserts it again first, or waits for this post before it takes what was
     * queued to the old endpoint: no post of a running peer lands in the old endpoint after that drain, where
     * nobody would answer it (issue 21, item 4).
     */
    private long postNow(final int slot, final FabricShmKeys.@Nullable View entered) {
        final byte kind = ops.kind[slot];
        if (kind == FabricOps.RECV || kind == FabricOps.CONTROL_RECV) {
            return endpoint.recvMsg(ops.message(slot), ops.flags[slot]);
        }
        final FabricShmKeys.View published = peers.keys(ops.peer[slot]);
        if (published == null || published == entered) {
            return postToPeer(slot, published);
        }
        published.enter();
        try {
            return postToPeer(slot, published);
        } finally {
            published.exit();
        }
    }

    /** Posts a write, read or send; {@code published}: the peer's keys, counted in already, or null. */
    private long postToPeer(final int slot, final FabricShmKeys.@Nullable View published) {
        final long peer = ops.peer[slot];
        if (peers.replacedSinceInsert(peer) && !renew(peer)) {
            return -FabricFailures.FI_EAGAIN; // posted again once what went to its old endpoint completed
        }
        ops.epoch[slot] = peers.epoch(peer);
        if (peers.isClosedHere(peer)) {
            return -FabricFailures.FI_ENOTCONN; // its memory is about to be unmapped: never hand it to the provider
        }
        peers.posting(peer);
        final long fiAddr = peers.fiAddr(peer);
        if (fiAddr != peer) {
            if (fiAddr == FabricPeers.FI_ADDR_NOTAVAIL) {
                return -FabricFailures.FI_ENOTCONN; // its reset failed: it is in the AV no more
            }
            ops.retarget(slot, fiAddr);
        }
        final MemorySegment msg = ops.message(slot);
        return switch (ops.kind[slot]) {
            case FabricOps.WRITE, FabricOps.READ -> postRma(slot, msg, published);
            default -> endpoint.sendMsg(msg, ops.flags[slot]);
        };
    }

    /**
     * Makes {@code peer}, which replaced its endpoint, reachable at its new one ({@link FabricPeers#renew}) once
     * nothing posted to it is outstanding (the provider still reaches the old endpoint's memory for those); false
     * while something is, or until a completion read took what its old endpoint queued here. A post that meets a
     * renewal that fails fails as unreachable. Scans the slots (once per replacement).
     */
    private boolean renew(final long peer) {
        for (int slot = 0; slot < ops.kind.length; slot++) {
            final byte kind = ops.kind[slot];
            if (ops.peer[slot] == peer
                    && ops.epoch[slot] != FabricOps.NOT_POSTED
                    && kind != FabricOps.RECV
                    && kind != FabricOps.CONTROL_RECV
                    && kind != 0) {
                return false;
            }
        }
        return peers.renew(peer, cqReads);
    }

    /**
     * Posts a write or read; to an shm peer that publishes its keys ({@code published}, which the caller counted
     * itself in at: see {@link #postNow}), only once they show the peer would take it (else
     * {@link #REFUSED_BEFORE_POSTING}, the reason in {@link #refusedBeforePosting}); being counted in from before the
     * check until the provider queued the command makes the peer's revocation of the key wait for it (see
     * {@link FabricShmKeys}).
     */
    private long postRma(final int slot, final MemorySegment msg, final FabricShmKeys.@Nullable View published) {
        final boolean write = ops.kind[slot] == FabricOps.WRITE;
        if (published != null) {
            final TransferEngineException refused =
                    published.refusal(ops.remoteKey(slot), ops.remoteAddress(slot), ops.length[slot], write);
            if (refused != null) {
                refusedBeforePosting = refused;
                return REFUSED_BEFORE_POSTING;
            }
        }
        return write ? endpoint.writeMsg(msg, ops.flags[slot]) : endpoint.readMsg(msg, ops.flags[slot]);
    }

    private void failPost(final int slot, final long rc) {
        final TransferEngineException refused = refusedBeforePosting;
        if (rc == REFUSED_BEFORE_POSTING && refused != null) {
            refusedBeforePosting = null;
            final long token = ops.token[slot];
            release(slot);
            settle(slot, refused);
            listener.onFailed(token, refused);
            return;
        }
        final String function =
                switch (ops.kind[slot]) {
                    case FabricOps.WRITE -> "fi_writemsg";
                    case FabricOps.READ -> "fi_readmsg";
                    case FabricOps.SEND, FabricOps.CONTROL_SEND -> endpoint.tagged() ? "fi_tsendmsg" : "fi_sendmsg";
                    default -> endpoint.tagged() ? "fi_trecvmsg" : "fi_recvmsg";
                };
        final int err = (int) -rc;
        final String text = function + ": " + endpoint.library().describe(err);
        finishWithError(slot, err, 0, text);
    }

    @Override
    public int poll() {
        if (closed || endpointLost) {
            return 0; // endpointLost: its endpoint is closed, and the domain failed (refusal() says so)
        }
        int work = drainChains();
        if (chain.size() > 0 && !turnedAway(chain.peer())) {
            work += chain.size();
            flushChain();
        }
        work += postOverdueAbandonments();
        if (control != null && pools.asking()) {
            work += askOverduePoolSizes();
        }
        work += drainPending();
        work += readCompletions();
        peers.releaseClosed();
        return work;
    }

    /**
     * Whether a sealed chain to {@code peer} waits in {@link #postingChains}: the chain being built then keeps growing
     * (up to {@link FabricWriteChain#LIMIT}) instead of being posted behind it, so that what arrives during one
     * delivery-complete round trip goes out behind one delivery-complete write.
     */
    private boolean turnedAway(final long peer) {
        boolean waiting = false;
        for (int n = postingChains.size(); n > 0; n--) {
            final FabricWriteChain sealed = postingChains.removeFirst();
            waiting |= sealed.peer() == peer;
            postingChains.offerLast(sealed);
        }
        return waiting;
    }

    /** Reads and handles up to {@link #CQ_BATCHES_PER_POLL} batches of completions; returns how many. */
    private int readCompletions() {
        if (endpointLost) {
            return 0;
        }
        int work = 0;
        for (int batch = 0; batch < CQ_BATCHES_PER_POLL; batch++) {
            final long n;
            if (endpoint.reportsSources()) {
                // a provider that leaves an entry's source unwritten must not attribute it to handle 0
                sources.fill((byte) -1); // FI_ADDR_NOTAVAIL in every slot
                n = endpoint.cqReadFrom(entries, CQ_BATCH, sources);
            } else {
                n = endpoint.cqRead(entries, CQ_BATCH);
            }
            cqReads++;
            endpoint.progressedOnce();
            if (n > 0) {
                handleBatch((int) n);
                work += (int) n;
                if (n < CQ_BATCH) {
                    break;
                }
            } else if (n == -FabricFailures.FI_EAVAIL) {
                reportLandedImms(); // the imms read before the error are reported before it
                readError();
                work++;
            } else if (n == -FabricFailures.FI_EAGAIN) {
                break;
            } else {
                fail("fi_cq_read failed: " + endpoint.library().describe((int) n) + " (" + n + ")");
                break;
            }
        }
        reportLandedImms();
        return work;
    }

    private int drainPending() {
        int posted = 0;
        for (int attempt = Math.min(postsPerPoll, pending.size()); attempt > 0; attempt--) {
            final int slot = pending.pollInt();
            final long rc = post(slot);
            if (rc == -FabricFailures.FI_EAGAIN) {
                pending.offerInt(slot);
            } else {
                if (rc < 0) {
                    failPost(slot, rc);
                }
                posted++;
            }
        }
        return posted;
    }

    /**
     * Handles the {@code n} entries of a batch: the imms, receives and control messages first, in their order, then
     * the completions of this side's writes, reads and sends, which nobody on the other side waits for. Receives and
     * control messages keep their place among the imms (the imms read before one are reported before it, as an
     * abandonment must follow the imms that landed before it). The imm run the batch ends with is left open for the
     * next batch of this read ({@link #readCompletions} reports it at the latest), so it may be reported after the
     * completions of this batch; both reach the engine in one queue that it drains after the poll.
     */
    private void handleBatch(final int n) {
        int deferred = 0;
        for (int i = 0; i < n; i++) {
            if (ownCompletion(i)) {
                deferredEntries[deferred++] = i;
            } else {
                complete(i);
            }
        }
        for (int k = 0; k < deferred; k++) {
            complete(deferredEntries[k]);
        }
    }

    /** Whether entry {@code index} completes a write, read or send of this side's. */
    private boolean ownCompletion(final int index) {
        final long offset = index * CQE_SIZE;
        if (isLandedImm(entries.get(JAVA_LONG, offset + CQE_FLAGS))) {
            return false;
        }
        final int slot = ops.slotOf(entries.get(JAVA_LONG, offset + CQE_OP_CONTEXT));
        if (slot < 0) {
            return false;
        }
        return FabricOps.isOperation(ops.kind[slot]);
    }

    /** Whether CQ flags {@code cqFlags} describe remote CQ data of a write that landed here (an imm). */
    private static boolean isLandedImm(final long cqFlags) {
        return (cqFlags & FI_REMOTE_CQ_DATA) != 0 && (cqFlags & FI_RECV) == 0;
    }

    private void complete(final int index) {
        final long offset = index * CQE_SIZE;
        final long cqFlags = entries.get(JAVA_LONG, offset + CQE_FLAGS);
        if (isLandedImm(cqFlags)) {
            // the NIC placed the bytes already: the run this imm joins is reserved and consumed at once when it ends
            final long source = endpoint.reportsSources() ? sources.getAtIndex(JAVA_LONG, index) : FI_ADDR_UNSPEC;
            final int imm = (int) entries.get(JAVA_LONG, offset + CQE_DATA);
            if (runImms > 0 && (source != runSource || imm != runImm)) {
                reportLandedImms();
            }
            runSource = source;
            runImm = imm;
            runImms++;
            landedBytes += entries.get(JAVA_LONG, offset + CQE_LEN);
            return;
        }
        reportLandedImms(); // the imms read before this entry are reported before it
        final int slot = ops.slotOf(entries.get(JAVA_LONG, offset + CQE_OP_CONTEXT));
        if (slot < 0) {
            return;
        }
        final long token = ops.token[slot];
        final long bytes = ops.length[slot];
        final byte kind = ops.kind[slot];
        final long peer = ops.peer[slot];
        final int received = (int) entries.get(JAVA_LONG, offset + CQE_LEN);
        release(slot);
        if (kind == FabricOps.RECV) {
            listener.onReceive(token, received);
        } else if (kind == FabricOps.CONTROL_SEND) {
            controlSent(token);
        } else if (kind == FabricOps.CONTROL_RECV) {
            controlReceived((int) token, received);
        } else {
            peers.markReachable(peer);
            if (kind == FabricOps.SEND && confirmations != null) {
                confirmations.sendDone(peer);
            }
            settle(slot, null); // the chain's held completions first, then this write's own
            listener.onComplete(token, bytes);
        }
    }

    /**
     * Reserves and consumes the run of equal imms from one source read from the CQ (a paged write's pages from one
     * writer): one {@link DomainListener#reserveImms} and one {@link DomainListener#onImms} for the run (still one imm
     * event each), or all of them refused and counted, and the bytes they brought in one count. The writer's share is
     * its own where the provider names it and this AV holds it; else the imms go to the one quota of peers nobody can
     * tell apart (null).
     */
    private void reportLandedImms() {
        if (runImms > 0) {
            final @Nullable NetworkAddress writer = endpoint.reportsSources() ? peers.address(runSource) : null;
            if (runImms == 1) {
                final long reservation = listener.reserveImm(writer, runImm);
                if (reservation != DomainListener.IMM_REFUSED) {
                    listener.onImm(reservation);
                }
            } else {
                final long reservation = listener.reserveImms(writer, runImm, runImms);
                if (reservation != DomainListener.IMM_REFUSED) {
                    listener.onImms(reservation, runImms);
                }
            }
            runImms = 0;
        }
        if (landedBytes > 0) {
            listener.onBytesReceived(landedBytes);
            landedBytes = 0;
        }
    }

    /**
     * A control message arrived in control buffer {@code index}: a receipt ends its abandonment's retries; an
     * abandonment is answered with a receipt and reported unless it is a repeat. Then the buffer is reposted.
     */
    private void controlReceived(final int index, final int length) {
        final FabricControl owner = Objects.requireNonNull(control);
        controlReceives--;
        try {
            switch (owner.decode(index, length)) {
                case FabricControl.Receipt receipt -> owner.receipted(receipt.nonce());
                case FabricControl.Abandonment a -> abandonmentReceived(owner, a);
                case FabricControl.PoolQuery q -> poolQueryReceived(q);
                case FabricControl.PoolSizes sizes -> {
                    if (confirmations == null
                            || !sizes.nonced()
                            || !confirmations.answered(peers.handle(sizes.peer()), sizes.nonce())) {
                        poolSizesReceived(sizes);
                    }
                }
                case FabricControl.Refused r -> refusals.refuse(r.reason(), r.why());
            }
        } finally {
            postControlReceive(owner, index);
        }
    }

    /**
     * An abandonment is reported (once per nonce) and answered with a receipt only where it names a region key of this
     * NIC: anyone can send one in any address's name, but only a holder of a descriptor knows a key.
     */
    private void abandonmentReceived(final FabricControl owner, final FabricControl.Abandonment a) {
        if (!regions.isRegistered(a.key()) && !owner.recentlyDeregistered(a.key())) {
            refusals.refuse(
                    FabricControlRefusals.Reason.UNPROVEN,
                    "a negative acknowledgement of imm " + a.imm() + " in the name of " + a.peer()
                            + " names no region key of this NIC");
            return;
        }
        sendReceipt(owner, a.peer(), a.nonce());
        if (owner.firstTime(a.nonce())) {
            listener.onImmAbandoned(a.peer(), a.imm(), a.missing(), a.cause());
        }
    }

    /**
     * A question for this domain's pool sizes is answered, echoing its nonce, and its asker told of later changes;
     * peers nothing else here addressed are resolved for it up to {@link #maxAskers}.
     */
    private void poolQueryReceived(final FabricControl.PoolQuery q) {
        final boolean known = peers.handle(q.peer()) != -1;
        if (!known && askers >= maxAskers) {
            refusals.refuse(
                    FabricControlRefusals.Reason.OVERFLOW,
                    "a question for the pool sizes from " + q.peer() + " is not answered: " + maxAskers
                            + " peers unknown here asked already");
            return;
        }
        final long asker = resolveQuietly(q.peer());
        if (asker == -1) {
            return;
        }
        if (!known) {
            askers++;
        }
        if (!pools.subscribe(asker, q.nonce())) {
            refusals.refuse(
                    FabricControlRefusals.Reason.OVERFLOW,
                    q.peer() + " is answered but not told of later changes: " + FabricPoolSizes.MAX_SUBSCRIBERS
                            + " peers are subscribed");
        }
        sendPoolMessage(asker, FabricControl.poolSizes(address, pools.advertised(), pools.version(), q.nonce()));
    }

    /**
     * Pool sizes are taken only from a peer this domain asked, echoing the nonce it asked with; a refused answer
     * from a peer it asked has it ask again (at most once a millisecond), in case its nonce was overwritten there by
     * a question in its name.
     */
    private void poolSizesReceived(final FabricControl.PoolSizes sizes) {
        final long from = peers.handle(sizes.peer());
        final FabricPoolSizes.View view = from == -1 ? null : pools.view(from);
        if (view == null || !sizes.nonced() || sizes.nonce() != view.nonce) {
            refusals.refuse(
                    FabricControlRefusals.Reason.UNASKED,
                    "pool sizes in the name of " + sizes.peer()
                            + (view == null ? ", which was not asked" : " without the nonce it was asked with"));
            final long now = System.nanoTime();
            if (view != null && view.settled && now - view.dueAt >= 0) {
                view.dueAt = now + FabricControl.retryDelayNanos(0);
                sendPoolMessage(from, FabricControl.poolQuery(address, view.nonce));
            }
            return;
        }
        poolSizesSettled(from, null, sizes.sizes(), sizes.version());
    }

    /** The handle of a peer that sent a control message; -1 (logged) when its address cannot be resolved. */
    private long resolveQuietly(final NetworkAddress from) {
        try {
            return peers.resolve(from);
        } catch (final RuntimeException e) {
            LOG.debug("{}: no answer to a control message from {}: {}", description, from, e.getMessage());
            return -1;
        }
    }

    private void readError() {
        errEntry.fill((byte) 0);
        final long rc = endpoint.cqReadErr(errEntry);
        if (rc < 0) {
            if (rc != -FabricFailures.FI_EAGAIN) {
                fail("fi_cq_readerr failed: " + endpoint.library().describe((int) rc));
            }
            return;
        }
        final int err = errEntry.get(JAVA_INT, ERR_ERR);
        final int provErrno = errEntry.get(JAVA_INT, ERR_PROV_ERRNO);
        final String providerText = endpoint.cqStrerror(provErrno, errEntry.get(JAVA_LONG, ERR_ERR_DATA), errText);
        final String text = endpoint.library().describe(err)
                + (providerText.isEmpty() ? "" : "; provider: " + providerText)
                + " (prov_errno " + provErrno + ")";
        final int slot = ops.slotOf(errEntry.get(JAVA_LONG, ERR_OP_CONTEXT));
        if (slot < 0) {
            LOG.warn("{}: completion error without an operation of ours: {}", description, text);
            return;
        }
        finishWithError(slot, err, provErrno, text);
    }

    private void finishWithError(final int slot, final int err, final int provErrno, final String text) {
        final long token = ops.token[slot];
        final byte kind = ops.kind[slot];
        final long peer = ops.peer[slot];
        final int epoch = ops.epoch[slot];
        final MemorySegment receiveBuffer = kind == FabricOps.RECV
                ? FabricLibrary.NATIVE.asSlice(ops.bufferAddress(slot), ops.length[slot])
                : MemorySegment.NULL;
        release(slot);
        if (kind == FabricOps.CONTROL_SEND || kind == FabricOps.CONTROL_RECV) {
            controlFailed(kind, token, text);
            return;
        }
        final NetworkAddress peerAddress = kind == FabricOps.RECV ? null : peers.address(peer);
        if (peerAddress != null && epoch != peers.epoch(peer)) {
            // the connection it went on was reset (an operation to the peer timed out); what it said is the reset
            final TransferEngineException reset = new PeerUnreachableException(
                    peerAddress,
                    endpoint.provider() + ": the connection was reset after an operation to the peer timed"
                            + " out, dropping what was still queued for it (" + text + ")");
            settle(slot, reset);
            listener.onFailed(token, reset);
            return;
        }
        final TransferEngineException error = FabricFailures.translate(
                err,
                provErrno,
                text,
                kind == FabricOps.WRITE ? "write" : kind == FabricOps.READ ? "read" : "send",
                peerAddress,
                endpoint.provider());
        if (FabricFailures.isUnreachable(err, provErrno) && peerAddress != null) {
            peers.markUnreachable(peer, text);
        }
        if (kind == FabricOps.RECV) {
            receiveFailed(token, receiveBuffer, err, text);
        } else {
            settle(slot, error);
            listener.onFailed(token, error);
        }
    }

    /**
     * A receive buffer came back with an error, its message not delivered: typically {@code FI_ETRUNC}, a send longer
     * than the buffer that the provider cut (the sender, which tagged it by sizes it had not heard were narrowed yet,
     * may have seen it done). The buffer is still its pool's, so it is posted again while the domain runs; one
     * cancelled ({@link #withdrawReceive}) comes back to the engine.
     */
    private void receiveFailed(final long token, final MemorySegment buffer, final int err, final String text) {
        if (closed || failure != null) {
            LOG.debug("{}: receive buffer {} ended: {}", description, token, text);
            return;
        }
        if (err == FabricFailures.FI_ECANCELED) {
            listener.onReceiveWithdrawn(token);
            return;
        }
        LOG.warn(
                "{}: a message into receive buffer {} was dropped, the buffer is posted again: {}",
                description,
                token,
                text);
        postReceive(token, buffer);
    }

    /**
     * A control send failed (an abandonment is posted again until it has had its attempts: a connection that broke
     * under it is connected again for a later post), or a control buffer failed (reposted while open).
     */
    private void controlFailed(final byte kind, final long token, final String text) {
        final FabricControl owner = Objects.requireNonNull(control);
        if (kind == FabricOps.CONTROL_SEND) {
            LOG.debug("{}: a control message did not leave: {}", description, text);
            if (confirmations != null) {
                confirmations.questionEnded(token, text, peers::address);
            }
            controlSent(token);
            return;
        }
        controlReceives--;
        if (!closed && failure == null) {
            refusals.refuse(
                    FabricControlRefusals.Reason.MALFORMED,
                    "control receive buffer " + token + " failed (a message longer than the buffer is cut): " + text);
            postControlReceive(owner, (int) token);
        } else {
            LOG.debug("{}: control receive buffer {} ended: {}", description, token, text);
        }
    }

    private void release(final int slot) {
        if (ops.kind[slot] == FabricOps.RECV) {
            receiveSlots.remove(ops.token[slot]);
        }
        final long temporary = ops.localKey[slot];
        if (temporary != 0) {
            regions.deregister(temporary);
        }
        ops.release(slot);
    }

    /** A fatal CQ error: the domain stops; what is outstanding fails. */
    private void fail(final String why) {
        LOG.error("{}: {}", description, why);
        failure = why;
        failOutstanding(new TransferEngineException(description + " failed: " + why));
    }

    private void failOutstanding(final TransferEngineException error) {
        pending.clear();
        final int waited = control == null ? 0 : control.clearSends();
        if (waited > 0) {
            LOG.warn(
                    "{}: {} negative acknowledgements waiting to be sent are dropped with the domain",
                    description,
                    waited);
        }
        controlReceives = 0;
        poolMessages.clear();
        failHeldSends(error);
        abandonChains();
        for (int slot = 0; slot < ops.kind.length; slot++) {
            final byte kind = ops.kind[slot];
            if (kind == 0) {
                continue;
            }
            final long token = ops.token[slot];
            release(slot);
            settle(slot, error);
            if (FabricOps.isOperation(kind)) {
                listener.onFailed(token, error); // control and receive buffers are nobody's operations
            }
        }
    }

    /**
     * Gives up the chain being built and the sealed chains waiting to be posted on: their slots stay in use, so the
     * caller's pass over the slots fails them (and ends each chain's confirmations, which reports its held
     * completions failed and takes it back).
     */
    private void abandonChains() {
        chain.clear();
        while (!postingChains.isEmpty()) {
            handedOver(postingChains.removeFirst());
        }
    }

    /** Fails the sends held for their peer's pool sizes or a first pool there. */
    private void failHeldSends(final TransferEngineException error) {
        for (final FabricPoolSizes.View view : pools.views().values()) {
            while (!view.held.isEmpty()) {
                listener.onFailed(view.held.pollFirst().token(), error);
            }
        }
    }

    @Override
    public @Nullable String failure() {
        return failure;
    }

    @Override
    public List<PeerInfo> peers() {
        return peers.snapshot();
    }

    /** The control messages dropped or not sent, per reason ({@link FabricControlRefusals}); any thread. */
    @Override
    public List<TransportEvent> events() {
        return refusals.events();
    }

    /**
     * Worker thread: drops the operation's queued posts. Where its pieces were handed to an RxM provider already, the
     * connection to each of their peers is reset ({@link FabricPeers#reset}), as the tcp transport resets its
     * connection: what the provider still queued for that peer, of this operation and of others, is dropped and
     * reported failed, so none of it lands later; bytes already in the sockets' buffers may still land. Elsewhere
     * a piece handed over completes as usual.
     */
    @Override
    public void cancel(final long token) {
        withdrawQueued(token);
        for (final FabricPoolSizes.View view : pools.views().values()) {
            view.held.removeIf(held -> held.token() == token);
        }
        if (resetsConnections) {
            resetPeersOf(token);
        } else if (keys != null) {
            failIfBehindAGonePeer();
        }
    }

    /**
     * shm answers the operations queued to a peer only while the peer's endpoint runs, and (2.1) completes an
     * endpoint's SAR, CMA and delivery-complete operations in posting order from one response queue for all peers
     * ({@code smr_progress_resp} stops at the first unanswered entry). So a piece still posted to a peer whose
     * endpoint is gone (closed, its process killed, or replaced since the piece was posted) is never answered, and
     * nothing posted after it completes, to any peer; no provider call clears that short of closing the endpoint.
     * A cancel (the engine's deadline) is when that shows, but the cancelled operation need not be the one behind
     * the gone peer: it may have completed, been withdrawn unposted, or wait behind another peer's pieces. So every
     * write, read and send is checked, each peer once: the first gone peer's pieces fail with {@link
     * PeerUnreachableException} and the endpoint is replaced ({@link #replaceEndpoint}; issue 21, item 4).
     */
    private void failIfBehindAGonePeer() {
        checkedPeers.clear();
        for (int slot = 0; slot < ops.kind.length; slot++) {
            final byte kind = ops.kind[slot];
            final long peer = ops.peer[slot];
            final FabricShmKeys.View published = FabricOps.isOperation(kind) ? peers.keys(peer) : null;
            if (published == null) {
                continue;
            }
            if (checkedPeers.add(peer) && published.ownerGone()) {
                failBehindGonePeer(
                        peer,
                        "its shm endpoint (pid " + published.pid() + ") is gone with operations queued to it, which"
                                + " libfabric's shm never answers",
                        true);
                return;
            }
            if (ops.epoch[slot] != FabricOps.NOT_POSTED && peers.replacedSinceInsert(peer)) {
                failBehindGonePeer(
                        peer,
                        "its shm endpoint (pid " + published.pid() + ") was replaced with operations queued to the"
                                + " old one, which nobody answers",
                        false);
                return;
            }
        }
    }

    /**
     * Fails the pieces posted to {@code peer}, whose endpoint is gone ({@code unreachable}: for good, else replaced
     * by a new one under the same address), and replaces this endpoint.
     */
    private void failBehindGonePeer(final long peer, final String reason, final boolean unreachable) {
        final NetworkAddress gone = Objects.requireNonNull(peers.address(peer));
        if (unreachable) {
            peers.markUnreachable(peer, reason);
        }
        for (int slot = 0; slot < ops.kind.length; slot++) {
            final byte kind = ops.kind[slot];
            if (ops.peer[slot] == peer && FabricOps.isOperation(kind)) {
                final long token = ops.token[slot];
                final TransferEngineException goneError = new PeerUnreachableException(gone, reason);
                release(slot);
                settle(slot, goneError);
                listener.onFailed(token, goneError);
            }
        }
        replaceEndpoint("shm peer " + gone + ": " + reason + "; this endpoint completes its operations in posting"
                + " order from one response queue for all peers, so none posted after them could complete (libfabric"
                + " 2.1 shm, issue 21 item 4)");
    }

    /**
     * Replaces this NIC's stalled shm endpoint by a new one under the same address (see the class comment, "A gone
     * shm peer"): what the old one held fails, except receive buffers, which are posted again. Where an endpoint
     * of this process holds this one, or the replacement fails, the NIC fails for good instead.
     */
    private void replaceEndpoint(final String stall) {
        final FabricShmKeys published = Objects.requireNonNull(keys);
        if (FabricLocalEndpoints.heldHere(endpoint)) {
            fail(stall + "; an endpoint of this process holds this one in its AV, so it cannot be replaced. Every"
                    + " operation on this NIC fails from now on: close the engine and build a new one");
            return;
        }
        if (!published.replacing()) {
            LOG.debug("{}: a peer stayed counted in at the published keys (killed while posting?)", description);
        }
        // the commands peers queued here before they saw the count rise are taken, so that their operations end
        for (int round = 0; round < DRAIN_ROUNDS && readCompletions() > 0; round++) {
            // each round handles a batch; stop at the first without any
        }
        final boolean replaced;
        try {
            replaced = FabricLocalEndpoints.replaceUnlessHeld(endpoint, endpoint::replace);
        } catch (final RuntimeException e) {
            endpointLost = true;
            fail(stall + "; replacing the endpoint failed (" + e.getMessage() + "). Every operation on this NIC"
                    + " fails from now on: close the engine and build a new one");
            return;
        }
        if (!replaced) {
            fail(stall + "; an endpoint of this process holds this one in its AV, so it cannot be replaced. Every"
                    + " operation on this NIC fails from now on: close the engine and build a new one");
            return;
        }
        LOG.warn(
                "{}: {}; replaced the endpoint under the same address: what it held failed, its receive buffers are"
                        + " posted again",
                description,
                stall);
        restartOnNewEndpoint(new TransferEngineException(description + ": " + stall + "; the endpoint was replaced"
                + " by a new one under the same address and this operation's completion went with the old one (its"
                + " bytes may still land)"));
    }

    /**
     * After {@link FabricEndpoint#replace}: fails every write, read and send the old endpoint held or that waited
     * for it with {@code lost}, lets control sends be posted again when overdue, and posts every receive buffer
     * (the application's and the control ones) on the new endpoint.
     */
    private void restartOnNewEndpoint(final TransferEngineException lost) {
        pending.clear();
        abandonChains();
        for (final FabricPoolSizes.View view : pools.views().values()) {
            while (!view.held.isEmpty()) {
                listener.onFailed(view.held.pollFirst().token(), lost);
            }
        }
        for (int slot = 0; slot < ops.kind.length; slot++) {
            final byte kind = ops.kind[slot];
            final long token = ops.token[slot];
            if (FabricOps.isOperation(kind)) {
                release(slot);
                settle(slot, lost);
                listener.onFailed(token, lost);
            } else if (kind == FabricOps.CONTROL_SEND) {
                release(slot);
                controlSent(token);
            } else if (kind == FabricOps.RECV || kind == FabricOps.CONTROL_RECV) {
                submit(slot, ops.flags[slot]);
            }
        }
    }

    /** Resets each peer that holds a piece of {@code token} posted on its current connection. Scans the slots. */
    private void resetPeersOf(final long token) {
        for (int slot = 0; slot < ops.kind.length; slot++) {
            final byte kind = ops.kind[slot];
            final long peer = ops.peer[slot];
            if (ops.token[slot] == token && FabricOps.isOperation(kind) && ops.epoch[slot] == peers.epoch(peer)) {
                peers.reset(peer);
            }
        }
    }

    /**
     * Drops {@code token}'s posts that wait here: its writes in the chain being built, its writes not posted yet in
     * the sealed chains waiting (but for a delivery-complete write of a chain that holds other requests' writes too:
     * it is still posted, last, to confirm those), and its held completions in every chain, which are never reported.
     */
    private void withdrawQueued(final long token) {
        withdrawFrom(chain, token);
        for (int n = postingChains.size(); n > 0; n--) {
            final FabricWriteChain sealed = postingChains.removeFirst();
            withdrawFrom(sealed, token);
            if (sealed.next() < sealed.size()) {
                postingChains.offerLast(sealed);
            } else {
                handedOver(sealed);
            }
        }
        for (int slot = 0; slot < ops.kind.length; slot++) { // the slots made so far
            final FabricWriteChain waiting = confirming[slot];
            if (waiting != null) {
                waiting.dropRuns(token);
            }
        }
        for (int n = pending.size(); n > 0; n--) {
            final int slot = pending.pollInt();
            final byte kind = ops.kind[slot];
            if (ops.token[slot] == token && FabricOps.isOperation(kind)) {
                release(slot);
            } else {
                pending.offerInt(slot);
            }
        }
    }

    private void withdrawFrom(final FabricWriteChain held, final long token) {
        held.dropRuns(token);
        for (int i = held.next(); i < held.size(); i++) {
            if (held.withdrawable(i, token)) {
                final int slot = held.slot(i);
                release(slot);
                settle(slot, null); // its runs are dropped; the chain's others still wait for their own confirmation
            }
        }
        held.withdraw(token);
    }

    /** Whether a cancelled operation's peers are reset (see {@link #cancel}). */
    boolean resetsConnections() {
        return resetsConnections;
    }

    /**
     * Whether {@code provider} of a library of API {@code version} gets its peers reset on a cancel: RxM before
     * libfabric 2.0. Not on 2.x: a 2.1 peer whose connection is reset dies (SIGSEGV in rxm_handle_comp_error right
     * after its tcp provider logged "internal/saved transfer failed (Connection reset by peer)"; seen with
     * FabricTimeoutResetTest), so there the posted pieces stay with the provider as before
     * (docs/delivery-contract.md). A 1.x engine resetting a 2.x peer would kill it the same way.
     */
    static boolean resetsConnections(final String provider, final int version) {
        return provider.endsWith(";ofi_rxm") && FabricLibrary.major(version) < 2;
    }

    /**
     * The longest message a send of {@code provider} (a library of API {@code version}) may carry so that it goes as
     * one eager message: RxM's eager limit ({@code FI_OFI_RXM_EAGER_LIMIT} on 1.x, else {@code
     * FI_OFI_RXM_BUFFER_SIZE}, the eager limit's name on 2.x, at most 16 KiB on 1.x; 16 KiB by default), {@link Long#MAX_VALUE} for other
     * providers. RxM sends a longer message by rendezvous, or (2.x, up to 8 times the limit) in segments: only its
     * first packet travels until a receive buffer takes it, and when its connection closes meanwhile (the sender
     * closed or died) RxM forgets the connection under it ({@code rxm_close_conn} clears its endpoint and drops the
     * segments held for it), so the buffer that later takes the message makes RxM read through a null endpoint:
     * SIGSEGV at the receiver, or the message dropped (issue 21, docs/delivery-contract.md). An eager message is
     * whole in the receiver's bounce buffer and outlives its connection. {@code env} reads the environment.
     */
    static long eagerLimit(final String provider, final int version, final Function<String, @Nullable String> env) {
        if (!provider.endsWith(";ofi_rxm")) {
            return Long.MAX_VALUE;
        }
        final boolean v1 = FabricLibrary.major(version) < 2;
        final long eager = v1 ? parsed(env.apply("FI_OFI_RXM_EAGER_LIMIT")) : -1;
        if (eager >= 0) {
            return eager;
        }
        final long buffer = parsed(env.apply("FI_OFI_RXM_BUFFER_SIZE"));
        if (buffer < 0) {
            return RXM_EAGER;
        }
        // 1.x's eager limit may not follow a buffer size set alone (not checked): never above its default then
        return v1 ? Math.min(buffer, RXM_EAGER) : buffer;
    }

    /** {@code set} as a number of bytes; -1 where unset or no number (RxM then keeps its default). */
    private static long parsed(final @Nullable String set) {
        if (set == null) {
            return -1;
        }
        try {
            return Long.parseLong(set.trim());
        } catch (final NumberFormatException e) {
            LOG.warn("an RxM limit of '{}' is no number; the default eager limit ({}) is assumed", set, RXM_EAGER);
            return -1;
        }
    }

    private String aboveEagerLimit(final long bytes) {
        return description + ": a send of " + bytes + " bytes is longer than RxM's eager limit (" + largestSend
                + " bytes). RxM would send it by rendezvous or in segments, and a receiver whose buffer takes such a"
                + " message after its sender closed or died crashes in libfabric (issue 21): send at most "
                + largestSend + " bytes on this provider, and move larger data with writes";
    }

    /** The longest message a send posts ({@link #eagerLimit}). */
    long largestSend() {
        return largestSend;
    }

    /** What this domain knows of {@code peer}'s receive pools; null before its first send there. For tests. */
    FabricPoolSizes.@Nullable View poolSizesOf(final long peer) {
        return pools.view(peer);
    }

    /** What the close left unconfirmed ({@link #confirmSendsDone}): each peer, with how many sends and why. */
    List<String> unconfirmedAtClose() {
        return unconfirmedAtClose;
    }

    /** Whether writes are posted in chains (see the class comment). */
    boolean chainsWrites() {
        return chained;
    }

    /** Operations posted or queued and not yet completed. */
    int outstanding() {
        return ops.inUse() - controlReceives;
    }

    /**
     * Reads completions once for a closing endpoint of this process that posted here, on this domain's driving
     * thread ({@link FabricLocalEndpoints}); nothing once this domain closed.
     */
    private void readCompletionsInline() {
        if (!closed) {
            readCompletions();
        }
    }

    /**
     * shm, before the endpoint closes: waits (at most {@link #LOCAL_TARGETS_WAIT_NANOS}, then WARN) until every
     * endpoint of this process it posted to read what it posted, or closed ({@link
     * FabricPeers#localTargetsCaughtUp}), reading this domain's own completions meanwhile, so that such a target
     * that closes at the same time and waits for this one sees it read too. Blocks; on the closing thread.
     */
    private void awaitLocalTargets() {
        final long deadline = System.nanoTime() + LOCAL_TARGETS_WAIT_NANOS;
        while (true) {
            peers.releaseClosed(); // a closing target's fi_close may wait for this AV to let go of it
            if (peers.localTargetsCaughtUp()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                LOG.warn(
                        "{}: closing although an endpoint of this process it posted to has not read the posts in {}"
                                + " ms (its thread stalled?); libfabric 2.1's shm may end the process when it reads"
                                + " them",
                        description,
                        LOCAL_TARGETS_WAIT_NANOS / 1_000_000);
                return;
            }
            readCompletions();
            LockSupport.parkNanos(LOCAL_TARGETS_PAUSE_NANOS);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new EngineClosedException(description + " is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (confirmations != null && failure == null) {
            confirmSendsDone(confirmations);
        }
        closed = true;
        try {
            if (keys != null) {
                keys.close(); // first: peers refuse what they would post from now on instead of meeting closed keys
            }
            awaitLocalTargets();
            regions.closeAll();
            peers.releaseAll();
            endpoint.close();
        } finally {
            // The endpoint is gone, so the provider no longer touches the slots: fail what it still held.
            failOutstanding(new EngineClosedException(description + " closed with the operation outstanding"));
            arena.close();
        }
    }

    /**
     * RxM providers, before the endpoint closes: asks each peer that sends were reported done to whether it read
     * them, polling meanwhile so that nothing a peer sent stays unread here, until every peer answered or was given
     * up, for at most {@code fabric.closeTimeoutMillis} ({@link FabricSendConfirmations}); a warning names what
     * stays unconfirmed. Sends still held for a peer's pool sizes fail first: they never left, and an answer would
     * send them now.
     */
    private void confirmSendsDone(final FabricSendConfirmations sends) {
        failHeldSends(new EngineClosedException(description + " closed before the send left"));
        final long start = System.nanoTime();
        sends.begin(start, this::unaskable, peers::address);
        for (long now = start; sends.waiting() && now - start < closeTimeoutNanos; now = System.nanoTime()) {
            for (long peer = sends.due(now); peer != -1; peer = sends.due(now)) {
                sends.asked(peer, sendPoolMessage(peer, FabricControl.poolQuery(address, sends.nonce(peer))), now);
            }
            poll();
            for (int n = pending.size(); n > 0; n--) { // the questions the provider turns away
                final int slot = pending.pollInt();
                if (ops.kind[slot] == FabricOps.CONTROL_SEND) {
                    sends.turnedAway(ops.token[slot], now, peers::address);
                }
                pending.offerInt(slot);
            }
        }
        unconfirmedAtClose = sends.unconfirmed(peers::address);
        if (!unconfirmedAtClose.isEmpty()) {
            LOG.warn(
                    "{}: closing without every peer's word that it read the sends reported done to it: {} reports a"
                            + " send done once its bytes are in the kernel's socket buffer, and what the kernel had"
                            + " not transmitted yet is lost if this close resets the connection (it does where the"
                            + " peer sent something unread here). Unconfirmed: {}",
                    description,
                    endpoint.provider(),
                    unconfirmedAtClose);
        }
    }

    /** Why the close cannot ask {@code peer} whether it read the sends: it never told its pool sizes; else null. */
    private @Nullable String unaskable(final long peer) {
        final FabricPoolSizes.View view = pools.view(peer);
        return view != null && view.settled && !view.byLength
                ? null
                : "it never told its receive pools' sizes (an engine before them?), so it cannot be asked";
    }
}
