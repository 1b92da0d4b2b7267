package dev.transferengine.test;

import dev.transferengine.Device;
import dev.transferengine.EngineConfig;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.RegionAccess;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.Transport;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * A real in-memory transport for unit tests of the core: its domains write into each other's registered memory,
 * on the thread that polls them, so a test drives whole groups by calling {@code doWork()} with no thread and no
 * socket. A write is placed when its sender polls, reported to the receiver when the receiver polls. Knobs let a
 * test hold a NIC's posts or its completions, and make its next poll throw.
 */
public final class LoopbackNetwork implements Transport {

    private final Map<NetworkAddress, LoopbackDomain> open = new HashMap<>();
    private final List<LoopbackDomain> opened = new ArrayList<>();

    /** A network with no NIC yet; an engine opens its NICs in it. */
    public LoopbackNetwork() {}

    @Override
    public String name() {
        return "loopback";
    }

    @Override
    public int autoPreference() {
        return Integer.MAX_VALUE;
    }

    @Override
    public @Nullable String unavailabilityCause(final EngineConfig config) {
        return null;
    }

    @Override
    public Domain openDomain(final DomainContext context) {
        final NetworkAddress address = NetworkAddress.of(
                name(), ByteBuffer.allocate(4).putInt(opened.size()).array());
        final LoopbackDomain domain = new LoopbackDomain(address, context.listener());
        open.put(address, domain);
        opened.add(domain);
        return domain;
    }

    /**
     * Every domain opened so far, in order; closed ones too.
     *
     * @return the domains, live
     */
    public List<LoopbackDomain> opened() {
        return opened;
    }

    /** One posted write, read or send. */
    private record Post(
            long token,
            boolean send,
            boolean read,
            MemorySegment src,
            long srcOffset,
            long length,
            NetworkAddress peer,
            long rkey,
            long remoteOffset,
            boolean hasImm,
            int imm) {}

    /** One NIC of the network; a test reaches it through {@link #opened()}. */
    public final class LoopbackDomain implements Domain {

        private final NetworkAddress address;
        private final DomainListener listener;
        private final Map<Long, MemorySegment> regions = new HashMap<>();
        private final Map<Long, RegionAccess> access = new HashMap<>();
        private final List<NetworkAddress> peers = new ArrayList<>();
        private final ArrayDeque<Post> posted = new ArrayDeque<>();
        /** Completions of placed writes not reported yet (while completions are held). */
        private final ArrayDeque<Runnable> completions = new ArrayDeque<>();
        /** What arrived from peers, reported at this domain's next poll. */
        private final ArrayDeque<Runnable> arrivals = new ArrayDeque<>();
        /** Imm reservations of writes that arrived but were not reported yet; a close gives them back. */
        private final ArrayDeque<Long> reservations = new ArrayDeque<>();

        private final ArrayDeque<MemorySegment> receiveBuffers = new ArrayDeque<>();
        private final ArrayDeque<Long> receiveTokens = new ArrayDeque<>();
        private final List<Long> cancelled = new ArrayList<>();
        private long nextKey = 1;
        private boolean holdPosts;
        private boolean holdCompletions;
        private @Nullable Supplier<Throwable> pollFailure;
        private boolean closed;

        LoopbackDomain(final NetworkAddress address, final DomainListener listener) {
            this.address = address;
            this.listener = listener;
        }

        /**
         * While held, posts wait here: nothing is placed.
         *
         * @param hold whether to hold
         */
        public void holdPosts(final boolean hold) {
            holdPosts = hold;
        }

        /**
         * While held, writes are placed but their completions wait.
         *
         * @param hold whether to hold
         */
        public void holdCompletions(final boolean hold) {
            holdCompletions = hold;
        }

        /**
         * The next poll throws what {@code failure} makes, before doing anything.
         *
         * @param failure makes the error to throw
         */
        public void failNextPoll(final Supplier<Throwable> failure) {
            pollFailure = failure;
        }

        /**
         * The tokens of the writes the engine cancelled, in order.
         *
         * @return the tokens, live
         */
        public List<Long> cancelled() {
            return cancelled;
        }

        /**
         * Posts held back by {@link #holdPosts}.
         *
         * @return how many wait
         */
        public int waitingPosts() {
            return posted.size();
        }

        /**
         * Whether the engine closed this domain.
         *
         * @return true once closed
         */
        public boolean isClosed() {
            return closed;
        }

        @Override
        public NetworkAddress address() {
            return address;
        }

        @Override
        public String description() {
            return "loopback " + address;
        }

        @Override
        public long register(final MemorySegment segment, final Device device, final RegionAccess allowed) {
            final long key = nextKey++;
            regions.put(key, segment);
            access.put(key, allowed);
            return key;
        }

        @Override
        public void deregister(final long rkey) {
            regions.remove(rkey);
            access.remove(rkey);
        }

        @Override
        public long resolve(final NetworkAddress peer) {
            final int known = peers.indexOf(peer);
            if (known >= 0) {
                return known;
            }
            peers.add(peer);
            return peers.size() - 1L;
        }

        @Override
        public void write(final WriteDescriptor write) {
            if (closed) {
                listener.onFailed(write.token(), new EngineClosedException("domain closed"));
                return;
            }
            posted.addLast(new Post(
                    write.token(),
                    false,
                    false,
                    write.src(),
                    write.srcOffset(),
                    write.length(),
                    peers.get((int) write.peer()),
                    write.rkey(),
                    write.remoteOffset(),
                    write.hasImm(),
                    write.imm()));
        }

        @Override
        public void read(final WriteDescriptor read) {
            if (closed) {
                listener.onFailed(read.token(), new EngineClosedException("domain closed"));
                return;
            }
            posted.addLast(new Post(
                    read.token(),
                    false,
                    true,
                    read.src(),
                    read.srcOffset(),
                    read.length(),
                    peers.get((int) read.peer()),
                    read.rkey(),
                    read.remoteOffset(),
                    false,
                    0));
        }

        @Override
        public void send(final long token, final long peer, final MemorySegment message) {
            posted.addLast(new Post(
                    token, true, false, message, 0, message.byteSize(), peers.get((int) peer), 0, 0, false, 0));
        }

        @Override
        public void postReceive(final long token, final MemorySegment buffer) {
            receiveTokens.addLast(token);
            receiveBuffers.addLast(buffer);
        }

        @Override
        public void withdrawReceive(final long token) {
            final Iterator<Long> tokens = receiveTokens.iterator();
            final Iterator<MemorySegment> buffers = receiveBuffers.iterator();
            while (tokens.hasNext()) {
                buffers.next();
                if (tokens.next() == token) {
                    tokens.remove();
                    buffers.remove();
                    listener.onReceiveWithdrawn(token);
                    return;
                }
            }
        }

        @Override
        public void cancel(final long token) {
            cancelled.add(token);
            posted.removeIf(p -> p.token() == token);
        }

        @Override
        public int poll() {
            final Supplier<Throwable> failure = pollFailure;
            if (failure != null) {
                pollFailure = null;
                sneakyThrow(failure.get());
            }
            if (closed) {
                return 0;
            }
            int work = 0;
            while (!arrivals.isEmpty()) {
                arrivals.pollFirst().run();
                work++;
            }
            while (!holdPosts && !posted.isEmpty()) {
                deliver(posted.pollFirst());
                work++;
            }
            while (!holdCompletions && !completions.isEmpty()) {
                completions.pollFirst().run();
                work++;
            }
            return work;
        }

        private void deliver(final Post post) {
            final LoopbackDomain target = open.get(post.peer());
            if (target == null) {
                fail(post, new PeerUnreachableException(post.peer(), "no loopback domain there"));
                return;
            }
            if (post.send()) {
                target.arrive(post, DomainListener.IMM_REFUSED);
                completions.addLast(() -> listener.onComplete(post.token(), post.length()));
                return;
            }
            final MemorySegment region = target.regions.get(post.rkey());
            if (region == null) {
                fail(post, new RemoteAccessException(RemoteAccessException.Reason.UNKNOWN_KEY, "rkey " + post.rkey()));
                return;
            }
            if (post.remoteOffset() < 0 || post.remoteOffset() > region.byteSize() - post.length()) {
                fail(post, new RemoteAccessException(RemoteAccessException.Reason.OUT_OF_BOUNDS, "outside the region"));
                return;
            }
            final RegionAccess allowed = target.access.getOrDefault(post.rkey(), RegionAccess.READ_WRITE);
            if (post.read()) {
                if (!allowed.allowsRemoteRead()) {
                    fail(post, new RemoteAccessException(RemoteAccessException.Reason.NOT_READABLE, "write-only"));
                    return;
                }
                MemorySegment.copy(region, post.remoteOffset(), post.src(), post.srcOffset(), post.length());
                completions.addLast(() -> listener.onComplete(post.token(), post.length()));
                return;
            }
            if (!allowed.allowsRemoteWrite()) {
                fail(post, new RemoteAccessException(RemoteAccessException.Reason.NOT_WRITABLE, "read-only"));
                return;
            }
            final long reservation =
                    post.hasImm() ? target.listener.reserveImm(address, post.imm()) : DomainListener.IMM_REFUSED;
            if (post.hasImm() && reservation == DomainListener.IMM_REFUSED) {
                fail(post, new TransferEngineException("imm " + post.imm() + " refused by the receiver"));
                return;
            }
            MemorySegment.copy(post.src(), post.srcOffset(), region, post.remoteOffset(), post.length());
            target.arrive(post, reservation);
            completions.addLast(() -> listener.onComplete(post.token(), post.length()));
        }

        private void arrive(final Post post, final long reservation) {
            if (post.send()) {
                final Long token = receiveTokens.pollFirst();
                final MemorySegment buffer = receiveBuffers.pollFirst();
                if (token != null && buffer != null) {
                    MemorySegment.copy(post.src(), 0, buffer, 0, post.length());
                    arrivals.addLast(() -> listener.onReceive(token, (int) post.length()));
                }
                return;
            }
            if (reservation != DomainListener.IMM_REFUSED) {
                reservations.addLast(reservation);
            }
            arrivals.addLast(() -> {
                listener.onBytesReceived(post.length());
                if (reservation != DomainListener.IMM_REFUSED) {
                    reservations.removeFirstOccurrence(reservation);
                    listener.onImm(reservation);
                }
            });
        }

        private void fail(final Post post, final TransferEngineException error) {
            listener.onFailed(post.token(), error);
        }

        @Override
        public @Nullable String failure() {
            return null;
        }

        @Override
        public List<PeerInfo> peers() {
            return List.of();
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            open.remove(address);
            final EngineClosedException error = new EngineClosedException(description() + " closed");
            while (!posted.isEmpty()) {
                fail(posted.pollFirst(), error);
            }
            arrivals.clear();
            while (!reservations.isEmpty()) {
                listener.releaseImm(reservations.pollFirst());
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void sneakyThrow(final Throwable failure) throws T {
        throw (T) failure;
    }
}
