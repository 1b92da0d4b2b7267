package dev.transferengine.test;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.RegionAccess;
import dev.transferengine.TransportEvent;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.Transport;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * Fault injection for tests: a {@link Domain} that passes everything to a real one, except that while held its
 * writes and sends wait here instead of being posted; releasing posts the backlog in order. Lets a test reorder
 * traffic across NICs, or make a write that cannot complete, without a hook in the transports. With
 * {@link #keepWithdrawn} it also makes a <em>late write</em>: one the engine gave up on (timed out, cancelled) whose
 * bytes still travel, as a provider keeps what was posted to it; {@link #lateReports()} then says how the real
 * transport ended it. Holding is set from any thread; the backlog belongs to the worker.
 */
public final class HoldingDomain implements Domain {

    private static final Map<NetworkAddress, HoldingDomain> OPEN = new ConcurrentHashMap<>();

    private record Held(long token, Runnable post) {}

    /**
     * How the transport ended a late write: the engine had given up on its operation already, so nobody else hears it.
     *
     * @param token the token it was posted with
     * @param failure why the transport failed it (e.g. the receiver refused its key), or null if it landed
     */
    public record LateReport(long token, @Nullable TransferEngineException failure) {}

    private final Domain inner;
    private final DomainListener listener;
    private final ArrayDeque<Held> backlog = new ArrayDeque<>();
    /** Tokens of withdrawn held posts that were kept, until the transport reports them. */
    private final Set<Long> late = ConcurrentHashMap.newKeySet();

    private final List<LateReport> lateReports = new CopyOnWriteArrayList<>();
    private final AtomicLong writes = new AtomicLong();
    private volatile boolean held;
    private volatile boolean paused;
    private volatile boolean keepWithdrawn;

    /**
     * Wraps {@code inner}; findable through {@link #at} by its address until closed.
     *
     * @param inner the domain that posts
     * @param listener the engine's listener, told of withdrawn held operations
     */
    public HoldingDomain(final Domain inner, final DomainListener listener) {
        this.inner = inner;
        this.listener = listener;
        OPEN.put(inner.address(), this);
    }

    /**
     * Opens a domain of {@code transport} and wraps it, seeing what it reports before the engine does (so that
     * {@link #lateReports()} can tell how late writes ended). Worker thread, as {@link Transport#openDomain}.
     *
     * @param transport the transport whose domain posts
     * @param context the engine's context for this NIC
     * @return the holding domain, findable through {@link #at} until closed
     */
    public static HoldingDomain open(final Transport transport, final DomainContext context) {
        final LateReporting reporting = new LateReporting(context.listener());
        final HoldingDomain domain = new HoldingDomain(
                transport.openDomain(new DomainContext(context.config(), context.group(), context.nic(), reporting)),
                context.listener());
        reporting.domain = domain;
        return domain;
    }

    /**
     * The open holding domain with that address.
     *
     * @param address e.g. from {@code engine.nics().get(i).address()}
     * @return the domain
     * @throws IllegalStateException if none is open there
     */
    public static HoldingDomain at(final NetworkAddress address) {
        final HoldingDomain domain = OPEN.get(address);
        if (domain == null) {
            throw new IllegalStateException(
                    "no holding domain at " + address + "; build the engine with transport " + HoldingTransport.NAME);
        }
        return domain;
    }

    /**
     * While held, writes and sends wait; releasing posts them at the worker's next poll. Any thread.
     *
     * @param hold whether to hold
     */
    public void hold(final boolean hold) {
        held = hold;
    }

    /**
     * While paused, the worker's polls do not reach the real domain: this NIC makes no progress and answers nothing,
     * no connection, handshake or message, as the NIC of a host that has not scheduled its worker for a while. Any
     * thread.
     *
     * @param pause whether to pause
     */
    public void pausePolling(final boolean pause) {
        paused = pause;
    }

    /**
     * Whether a held post that the engine withdraws (its operation timed out or was cancelled) stays in the backlog
     * and is posted on release, as a provider keeps what was handed to it, instead of being dropped. Any thread.
     *
     * @param keep whether to keep withdrawn posts
     */
    public void keepWithdrawn(final boolean keep) {
        keepWithdrawn = keep;
    }

    /**
     * How the transport ended the late writes ({@link #keepWithdrawn}) so far, in the order it reported them. Only a
     * domain made by {@link #open} sees them. Any thread.
     *
     * @return a snapshot
     */
    public List<LateReport> lateReports() {
        return List.copyOf(lateReports);
    }

    /**
     * How many writes the engine posted to this NIC, held or not. Any thread.
     *
     * @return the count
     */
    public long writes() {
        return writes.get();
    }

    @Override
    public void write(final WriteDescriptor write) {
        writes.incrementAndGet();
        if (held || !backlog.isEmpty()) {
            final WriteDescriptor kept = write.copy();
            backlog.addLast(new Held(kept.token(), () -> inner.write(kept)));
        } else {
            inner.write(write);
        }
    }

    @Override
    public void read(final WriteDescriptor read) {
        if (held || !backlog.isEmpty()) {
            final WriteDescriptor kept = read.copy();
            backlog.addLast(new Held(kept.token(), () -> inner.read(kept)));
        } else {
            inner.read(read);
        }
    }

    @Override
    public void send(final long token, final long peer, final MemorySegment message) {
        final Runnable post = () -> inner.send(token, peer, message);
        if (held || !backlog.isEmpty()) {
            backlog.addLast(new Held(token, post));
        } else {
            post.run();
        }
    }

    /** Not held: a negative acknowledgement is a control message, and it must reach the peer of a held write. */
    @Override
    public void abandonImm(final long peer, final long rkey, final int imm, final int missing, final String cause) {
        inner.abandonImm(peer, rkey, imm, missing, cause);
    }

    /** What the real domain says: the engine's close waits on it, held posts or not. */
    @Override
    public boolean abandonmentsPending() {
        return inner.abandonmentsPending();
    }

    @Override
    public int poll() {
        if (paused) {
            return 0;
        }
        int work = 0;
        while (!held && !backlog.isEmpty()) {
            backlog.pollFirst().post().run();
            work++;
        }
        return work + inner.poll();
    }

    @Override
    public void cancel(final long token) {
        if (keepWithdrawn) {
            if (backlog.stream().anyMatch(h -> h.token() == token)) {
                late.add(token); // posted on release all the same: a late write
            }
        } else {
            backlog.removeIf(h -> h.token() == token);
        }
        inner.cancel(token);
    }

    /** Records what the transport reports for a late write, then passes every report on to the engine. */
    private static final class LateReporting implements DomainListener {
        private final DomainListener engine;
        private @Nullable HoldingDomain domain;

        LateReporting(final DomainListener engine) {
            this.engine = engine;
        }

        private void report(final long token, final @Nullable TransferEngineException failure) {
            final HoldingDomain d = domain;
            if (d != null && d.late.remove(token)) {
                d.lateReports.add(new LateReport(token, failure));
            }
        }

        @Override
        public void onComplete(final long token, final long bytes) {
            report(token, null);
            engine.onComplete(token, bytes);
        }

        @Override
        public void onFailed(final long token, final TransferEngineException error) {
            report(token, error);
            engine.onFailed(token, error);
        }

        @Override
        public void onReceive(final long token, final int length) {
            engine.onReceive(token, length);
        }

        @Override
        public void onReceiveWithdrawn(final long token) {
            engine.onReceiveWithdrawn(token);
        }

        @Override
        public long reserveImm(final @Nullable NetworkAddress peer, final int imm) {
            return engine.reserveImm(peer, imm);
        }

        @Override
        public void onImm(final long reservation) {
            engine.onImm(reservation);
        }

        @Override
        public void releaseImm(final long reservation) {
            engine.releaseImm(reservation);
        }

        @Override
        public void onImmAbandoned(final NetworkAddress peer, final int imm, final int missing, final String cause) {
            engine.onImmAbandoned(peer, imm, missing, cause);
        }

        @Override
        public void onBytesReceived(final long bytes) {
            engine.onBytesReceived(bytes);
        }
    }

    @Override
    public void close() {
        OPEN.remove(inner.address(), this);
        Held h;
        while ((h = backlog.pollFirst()) != null) {
            final EngineClosedException closed = new EngineClosedException("domain closed while the post was held");
            listener.onFailed(h.token(), closed);
        }
        inner.close();
    }

    @Override
    public NetworkAddress address() {
        return inner.address();
    }

    @Override
    public String description() {
        return "holding " + inner.description();
    }

    @Override
    public long register(final MemorySegment segment, final Device device, final RegionAccess access) {
        return inner.register(segment, device, access);
    }

    @Override
    public void deregister(final long rkey) {
        inner.deregister(rkey);
    }

    @Override
    public long resolve(final NetworkAddress peer) {
        return inner.resolve(peer);
    }

    @Override
    public void postReceive(final long token, final MemorySegment buffer) {
        inner.postReceive(token, buffer);
    }

    @Override
    public void withdrawReceive(final long token) {
        inner.withdrawReceive(token);
    }

    @Override
    public @Nullable String failure() {
        return inner.failure();
    }

    @Override
    public List<PeerInfo> peers() {
        return inner.peers();
    }

    @Override
    public List<TransportEvent> events() {
        return inner.events();
    }
}
