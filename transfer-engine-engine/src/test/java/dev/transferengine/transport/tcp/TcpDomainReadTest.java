package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionAccess;
import dev.transferengine.exceptions.EngineClosedException;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;

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
    void aReadStreamedInSeveralFramesTakesEachInTurnAndNothingBeyondIt() {
        // a device region is served through the staging chunks: one READ_DATA frame per chunk, in order
        final TcpMemory memory = new TcpMemory(arena.allocate(4000));
        final TcpReads reads = new TcpReads(readerEvents);
        final NetworkAddress peer = owner.address();
        final int id = reads.start(12, memory, 0, 4000, peer);

        for (int frame = 0; frame < 4; frame++) {
            assertThat(reads.landing(id, peer, frame * 1000L, 1000))
                    .as("frame %d", frame)
                    .isNotNull();
            reads.landed(id, 1000);
            assertThat(reads.landing(id, peer, 0, 4001 - 1000L * (frame + 1)))
                    .as("more than the %d bytes still due", 4000 - 1000 * (frame + 1))
                    .isNull();
        }

        assertThat(readerEvents.completed).containsEntry(12L, 4000L);
        assertThat(reads.landing(id, peer, 0, 1000))
                .as("complete: nothing more lands")
                .isNull();
    }

    @Test
    void theBytesOfAnAcceptedReadAreNeverRefusedByTheOwnersBoundOnRequestsPerPeer() {
        // The owner's connection to the reader carries a write of its own, unanswered, when the READ arrives. Its
        // READ_DATA used to count against tcp.maxQueuedPerPeer there and be dropped unseen, so the read waited
        // for bytes that never came until it timed out (te-bench --op paged-read under load, docs/read.md).
        final RecordingDomainListener boundedEvents = new RecordingDomainListener();
        final TcpDomain bounded = TcpDomains.open(boundedEvents, 0, 0, Map.of("tcp.maxQueuedPerPeer", "1"));
        try {
            final MemorySegment source = pattern(8192, 8);
            final long rkey = bounded.register(source, Device.host());
            final MemorySegment local = arena.allocate(8192);
            final long localKey = reader.register(local, Device.host());
            final MemorySegment mailbox = arena.allocate(64);
            final long mailboxKey = reader.register(mailbox, Device.host());
            final long ownerHandle = reader.resolve(bounded.address());
            final WriteDescriptor toReader = new WriteDescriptor()
                    .source(source, 0, rkey, 64)
                    .target(bounded.resolve(reader.address()), mailbox.address(), 0, mailboxKey);
            // both connections up and idle: the reader's to the owner (READ) and the owner's to the reader
            reader.write(new WriteDescriptor()
                    .token(19)
                    .source(local, 0, localKey, 64)
                    .target(ownerHandle, source.address(), 0, rkey));
            bounded.write(toReader.token(29));
            pollUntil(() -> readerEvents.ended(19) && boundedEvents.ended(29), reader, bounded);
            assertThat(readerEvents.completed).containsKey(19L);
            assertThat(boundedEvents.completed).containsKey(29L);

            reader.read(new WriteDescriptor()
                    .token(21)
                    .source(local, 0, localKey, 8192)
                    .target(ownerHandle, source.address(), 0, rkey));
            reader.poll(); // the READ leaves
            bounded.write(toReader.token(30));
            // the owner sends its write, then finds the READ while the write still awaits its answer
            for (int poll = 0; poll < 100 && TcpDomains.count(bounded, TcpCounter.BACK_PRESSURE) == 0; poll++) {
                bounded.poll();
            }
            pollUntil(() -> readerEvents.ended(21) && boundedEvents.ended(30), reader, bounded);

            assertThat(readerEvents.completed).containsEntry(21L, 8192L);
            assertThat(boundedEvents.completed).containsKey(30L);
            assertThat(TcpDomains.count(bounded, TcpCounter.BACK_PRESSURE)).isZero();
        } finally {
            bounded.close();
        }
    }

    @Test
    void readsFromAnOwnerWhoseConnectionToTheReaderClosedFailAtOnceAndOthersStayPending() {
        final TcpMemory memory = new TcpMemory(arena.allocate(4096));
        final TcpReads reads = new TcpReads(readerEvents);
        final NetworkAddress gone = owner.address();
        reads.start(13, memory, 0, 1000, gone);
        reads.start(13, memory, 1000, 1000, gone);
        final int other = reads.start(14, memory, 2000, 1000, reader.address());

        reads.failFrom(gone, "connection closed by peer");

        assertThat(readerEvents.failed.get(13L))
                .isInstanceOf(PeerUnreachableException.class)
                .hasMessageContaining("read from")
                .hasMessageContaining("connection closed by peer");
        assertThat(reads.pending()).isEqualTo(1);
        assertThat(reads.landing(other, reader.address(), 0, 1000)).isNotNull();
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
