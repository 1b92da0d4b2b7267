package dev.transferengine.test;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.RegionAccess;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * Fault injection for tests: a {@link Domain} that passes everything to a real one, except that while held its
 * writes and sends wait here instead of being posted; releasing posts the backlog in order. Lets a test reorder
 * traffic across NICs, or make a write that cannot complete, without a hook in the transports. Holding is set
 * from any thread; the backlog belongs to the worker.
 */
public final class HoldingDomain implements Domain {

    private static final Map<NetworkAddress, HoldingDomain> OPEN = new ConcurrentHashMap<>();

    private record Held(long token, Runnable post) {}

    private final Domain inner;
    private final DomainListener listener;
    private final ArrayDeque<Held> backlog = new ArrayDeque<>();
    private volatile boolean held;

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

    @Override
    public void write(final WriteDescriptor write) {
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
    public void abandonImm(final long peer, final int imm, final int missing, final String cause) {
        inner.abandonImm(peer, imm, missing, cause);
    }

    @Override
    public int poll() {
        int work = 0;
        while (!held && !backlog.isEmpty()) {
            backlog.pollFirst().post().run();
            work++;
        }
        return work + inner.poll();
    }

    @Override
    public void cancel(final long token) {
        backlog.removeIf(h -> h.token() == token);
        inner.cancel(token);
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
    public @Nullable String failure() {
        return inner.failure();
    }

    @Override
    public List<PeerInfo> peers() {
        return inner.peers();
    }
}
