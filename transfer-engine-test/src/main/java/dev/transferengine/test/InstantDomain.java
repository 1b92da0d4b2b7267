package dev.transferengine.test;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.PeerInfo;
import dev.transferengine.RegionAccess;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.DomainContext;
import dev.transferengine.spi.DomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * A NIC of {@link InstantTransport}: every write, read and send is reported complete from inside its post call (the
 * engine queues such reports and handles them after the post returns), no bytes move and no imm is delivered.
 * Worker thread only, like every domain; allocation-free on the data path.
 */
public final class InstantDomain implements Domain {

    private static final AtomicLong NEXT_ID = new AtomicLong();

    private final DomainListener listener;
    private final NetworkAddress address;
    private long nextKey = 1;

    /**
     * A NIC for an engine's worker.
     *
     * @param context what the engine gives the NIC
     */
    public InstantDomain(final DomainContext context) {
        this.listener = context.listener();
        this.address = NetworkAddress.of(
                InstantTransport.NAME,
                ByteBuffer.allocate(Long.BYTES)
                        .putLong(NEXT_ID.incrementAndGet())
                        .array());
    }

    @Override
    public NetworkAddress address() {
        return address;
    }

    @Override
    public String description() {
        return "instant " + address;
    }

    @Override
    public long register(final MemorySegment segment, final Device device, final RegionAccess access) {
        return nextKey++;
    }

    @Override
    public void deregister(final long rkey) {
        // nothing is held per region
    }

    @Override
    public long resolve(final NetworkAddress peer) {
        return 0;
    }

    @Override
    public void write(final WriteDescriptor write) {
        listener.onComplete(write.token(), write.length());
    }

    @Override
    public void read(final WriteDescriptor read) {
        listener.onComplete(read.token(), read.length());
    }

    @Override
    public void send(final long token, final long peer, final MemorySegment message) {
        listener.onComplete(token, message.byteSize());
    }

    @Override
    public void postReceive(final long token, final MemorySegment buffer) {
        // nothing ever arrives
    }

    /** Nothing is kept: the buffer was never the domain's, so nothing comes back. */
    @Override
    public void withdrawReceive(final long token) {
        // postReceive kept nothing
    }

    @Override
    public int poll() {
        return 0;
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
    public void cancel(final long token) {
        // every operation ended inside its post
    }

    @Override
    public void close() {
        // nothing to release
    }
}
