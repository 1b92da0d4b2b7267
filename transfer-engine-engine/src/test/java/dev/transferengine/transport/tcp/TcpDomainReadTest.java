package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionAccess;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

/** Reads on the tcp domain: READ out, READ_DATA back on the owner's own connection, and the reader's fence. */
class TcpDomainReadTest {

    private final Arena arena = Arena.ofShared();
    private final RecordingDomainListener readerEvents = new RecordingDomainListener();
    private final RecordingDomainListener ownerEvents = new RecordingDomainListener();
    private TcpDomain reader;
    private TcpDomain owner;

    @BeforeEach
    void open() {
        reader = TcpDomains.open(readerEvents);
        owner = TcpDomains.open(ownerEvents);
    }

    @AfterEach
    void close() {
        reader.close();
        owner.close();
        arena.close();
    }

    @Test
    void readPullsTheOwnersBytesIntoTheLocalRegionAndTheOwnerIsNotTold() {
        final MemorySegment source = pattern(100_000, 3);
        final long rkey = owner.register(source, Device.host(), RegionAccess.READ_ONLY);
        final MemorySegment local = arena.allocate(200_000);
        final long localKey = reader.register(local, Device.host());

        reader.read(read(7, local, localKey, 3000, 50_000, source, rkey, 1000));
        pollUntil(() -> readerEvents.ended() == 1, reader, owner);

        assertThat(readerEvents.completed).containsEntry(7L, 50_000L);
        assertThat(local.asSlice(3000, 50_000).mismatch(source.asSlice(1000, 50_000)))
                .isEqualTo(-1);
        assertThat(local.get(ValueLayout.JAVA_BYTE, 2999)).isZero();
        assertThat(ownerEvents.imms).isEmpty();
        assertThat(ownerEvents.ended()).isZero();
    }

    @Test
    void readsOfAWriteOnlyOrUnknownRegionAreRefusedAndWritesIntoAReadOnlyOne() {
        final MemorySegment writeOnly = pattern(4096, 4);
        final long writeOnlyKey = owner.register(writeOnly, Device.host(), RegionAccess.WRITE_ONLY);
        final MemorySegment readOnly = pattern(4096, 5);
        final long readOnlyKey = owner.register(readOnly, Device.host(), RegionAccess.READ_ONLY);
        final MemorySegment local = arena.allocate(4096);
        final long localKey = reader.register(local, Device.host());

        reader.read(read(1, local, localKey, 0, 4096, writeOnly, writeOnlyKey, 0));
        reader.read(read(2, local, localKey, 0, 4096, writeOnly, writeOnlyKey + 1, 0));
        reader.write(new WriteDescriptor()
                .token(3)
                .source(local, 0, localKey, 4096)
                .target(reader.resolve(owner.address()), readOnly.address(), 0, readOnlyKey));
        pollUntil(() -> readerEvents.ended() == 3, reader, owner);

        assertThat(reason(1)).isEqualTo(RemoteAccessException.Reason.NOT_READABLE);
        assertThat(reason(2)).isEqualTo(RemoteAccessException.Reason.UNKNOWN_KEY);
        assertThat(reason(3)).isEqualTo(RemoteAccessException.Reason.NOT_WRITABLE);
        assertThat(local.mismatch(arena.allocate(4096))).isEqualTo(-1);
        assertThat(readOnly.mismatch(pattern(4096, 5))).isEqualTo(-1);
        assertThat(TcpDomains.count(owner, TcpCounter.REFUSED_NOT_READABLE)).isEqualTo(1);
        assertThat(TcpDomains.count(owner, TcpCounter.REFUSED_NOT_WRITABLE)).isEqualTo(1);
    }

    @Test
    void aReadCancelledBeforeItLeftIsNeverPostedAndNeverReported() {
        final MemorySegment source = pattern(8192, 6);
        final long rkey = owner.register(source, Device.host());
        final MemorySegment local = arena.allocate(16_384);
        final long localKey = reader.register(local, Device.host());

        reader.read(read(8, local, localKey, 0, 8192, source, rkey, 0));
        reader.cancel(8);
        reader.read(read(9, local, localKey, 8192, 8192, source, rkey, 0));
        pollUntil(() -> readerEvents.ended(9), reader, owner);

        assertThat(readerEvents.completed).containsOnlyKeys(9L);
        assertThat(local.asSlice(0, 8192).mismatch(arena.allocate(8192))).isEqualTo(-1);
        assertThat(local.asSlice(8192, 8192).mismatch(source)).isEqualTo(-1);
    }

    @Test
    void bytesForAReadTheReaderNoLongerWaitsForAreRefusedAndNeverLand() {
        final MemorySegment local = arena.allocate(4096);
        final TcpMemory memory = new TcpMemory(local);
        final TcpReads reads = new TcpReads(readerEvents);
        final NetworkAddress peer = owner.address();
        final int id = reads.start(5, memory, 0, 4096, peer);

        assertThat(reads.landing(id, reader.address(), 0, 4096))
                .as("another peer")
                .isNull();
        assertThat(reads.landing(id, peer, 4000, 200)).as("beyond the read").isNull();
        assertThat(reads.landing(id, peer, 0, 4096)).isNotNull();
        reads.cancel(5);

        assertThat(reads.landing(id, peer, 0, 4096))
                .as("fenced once the engine gave up")
                .isNull();
        assertThat(reads.pending()).isZero();
        assertThat(readerEvents.ended()).isZero();
        final int next = reads.start(6, memory, 0, 4096, peer);
        reads.landed(next, 1000);
        assertThat(readerEvents.ended()).isZero();
        reads.landed(next, 3096);
        assertThat(readerEvents.completed).containsEntry(6L, 4096L);
        reads.landed(next, 4096); // ended: a late report changes nothing
        assertThat(readerEvents.ended()).isEqualTo(1);
    }

    @Test
    void closingTheReaderFailsItsPendingReadsOnce() {
        final MemorySegment local = arena.allocate(4096);
        final long localKey = reader.register(local, Device.host());
        final MemorySegment source = pattern(4096, 7);
        final long rkey = owner.register(source, Device.host());

        reader.read(read(11, local, localKey, 0, 4096, source, rkey, 0));
        reader.close();

        assertThat(readerEvents.failed.get(11L)).isInstanceOf(EngineClosedException.class);
        assertThat(readerEvents.ended()).isEqualTo(1);
    }

    private WriteDescriptor read(
            final long token,
            final MemorySegment local,
            final long localKey,
            final long localOffset,
            final long length,
            final MemorySegment remote,
            final long rkey,
            final long remoteOffset) {
        return new WriteDescriptor()
                .token(token)
                .source(local, localOffset, localKey, length)
                .target(reader.resolve(owner.address()), remote.address(), remoteOffset, rkey);
    }

    private RemoteAccessException.Reason reason(final long token) {
        final TransferEngineException failure = readerEvents.failed.get(token);
        if (!(failure instanceof RemoteAccessException refusal)) {
            throw new AssertionError("token " + token + " did not end refused: " + failure);
        }
        return refusal.reason();
    }

    private MemorySegment pattern(final int size, final int seed) {
        final MemorySegment segment = arena.allocate(size);
        for (int i = 0; i < size; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + seed));
        }
        return segment;
    }
}
