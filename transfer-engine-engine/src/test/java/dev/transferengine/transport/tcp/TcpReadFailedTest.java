package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.cuda.HostBackedDeviceMemory;
import dev.transferengine.exceptions.BackPressureException;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.spi.DeviceMemory;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * READ_FAILED ({@link TcpFrame#FEATURE_READ_FAILED}): an owner that stops serving a read part-way tells the reader.
 * The frame's layout, the reader's checks of it, and what it does to the read it names.
 */
class TcpReadFailedTest {

    private static final NetworkAddress OWNER =
            TcpAddress.toNetworkAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 7401));
    private static final NetworkAddress OTHER =
            TcpAddress.toNetworkAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 7402));

    private final Arena arena = Arena.ofShared();
    private final RecordingDomainListener readerEvents = new RecordingDomainListener();
    private final TcpDomain reader = TcpDomains.open(readerEvents);

    @AfterEach
    void close() {
        reader.close();
        arena.close();
    }

    @Test
    void aReadFailedFrameCarriesTheReadItEndsWhyAndTheBytesSentAndNoPayload() {
        final TcpOp op = new TcpOp().readFailed(TcpReadServer.SERVE_TOKEN, 7, TcpReadFailure.COPY_FAILED, 8192);
        final ByteBuffer bytes = ByteBuffer.allocate(TcpFrame.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        // as TcpOutbound encodes a request with the connection's id 3
        new TcpFrame(bytes).encode(op.type, op.imm, op.aux, 3, op.rkey, op.remoteOffset, op.length);

        final TcpFrame frame = new TcpFrame(bytes);
        assertThat(frame.hasValidPreamble()).isTrue();
        assertThat(TcpFrame.typeName(frame.type())).isEqualTo("READ_FAILED");
        assertThat(frame.imm()).as("the read id").isEqualTo(7);
        assertThat(TcpReadFailure.ofCode(frame.aux())).isEqualTo(TcpReadFailure.COPY_FAILED);
        assertThat(frame.token()).isEqualTo(3);
        assertThat(frame.rkey()).isZero();
        assertThat(frame.offset()).as("bytes sent before").isEqualTo(8192);
        assertThat(frame.length()).isZero();
        assertThat(op.payload()).isZero();
        assertThat(TcpReadFailure.ofCode(0)).isNull();
        assertThat(TcpReadFailure.ofCode(3)).isNull();
    }

    @Test
    void aReadFailedForAReadTheReaderNoLongerWaitsForIsAcknowledgedAndChangesNothing() throws IOException {
        try (RawPeer raw = new RawPeer(reader)) {
            raw.features(TcpFrame.FEATURE_READ_FAILED)
                    .authenticate(reader)
                    .send(readFailed(1, 42, TcpReadFailure.MEMORY_LOST.code(), 0));
            pollUntil(() -> raw.receivedBytes() >= TcpFrame.HEADER_LENGTH, reader);

            assertThat(raw.answer(0).type()).isEqualTo(TcpFrame.ACK);
            assertThat(raw.answer(0).token()).isEqualTo(1);
            assertThat(raw.closedByPeer()).isFalse();
            assertThat(readerEvents.ended()).isZero();
        }
    }

    @Test
    void aReadFailedThatWasNotAgreedOrIsMalformedClosesItsConnection() throws IOException {
        final RecordingDomainListener withoutEvents = new RecordingDomainListener();
        final TcpDomain without = TcpDomains.open(withoutEvents, 0, 0, Map.of(TcpSettings.READ_FAILURES, "false"));
        try {
            final int lost = TcpReadFailure.MEMORY_LOST.code();
            closesTheConnection(reader, 0, readFailed(1, 5, lost, 0)); // the peer did not announce it
            closesTheConnection(without, TcpFrame.FEATURE_READ_FAILED, readFailed(1, 5, lost, 0)); // nor did we
            closesTheConnection(reader, TcpFrame.FEATURE_READ_FAILED, readFailed(1, 5, 99, 0)); // unknown reason
            final ByteBuffer withPayload = readFailed(1, 5, lost, 0).putLong(40, 4);
            closesTheConnection(reader, TcpFrame.FEATURE_READ_FAILED, withPayload);

            assertThat(TcpDomains.count(reader, TcpCounter.MALFORMED_FRAMES)).isEqualTo(3);
            assertThat(TcpDomains.count(without, TcpCounter.MALFORMED_FRAMES)).isEqualTo(1);
            assertThat(readerEvents.ended() + withoutEvents.ended()).isZero();
        } finally {
            without.close();
        }
    }

    @Test
    void aStoppedReadFailsOnceNamingThePeerTheBytesInPlaceAndWhyAndLateBytesAreRefused() {
        final TcpReads reads = new TcpReads(readerEvents);
        final int id = reads.start(5, new TcpMemory(arena.allocate(8192)), 100, 4000, OWNER);
        reads.landed(id, 1000);

        reads.stopped(OTHER, id, TcpReadFailure.MEMORY_LOST);
        assertThat(readerEvents.ended()).as("another peer cannot end it").isZero();
        reads.stopped(OWNER, id, TcpReadFailure.MEMORY_LOST);

        assertThat(readerEvents.failed.get(5L))
                .isInstanceOfSatisfying(RemoteAccessException.class, failed -> assertThat(failed.reason())
                        .isEqualTo(RemoteAccessException.Reason.REGION_DEREGISTERED))
                .hasMessage("REGION_DEREGISTERED: peer " + OWNER.describe() + " stopped serving the read of 4000 "
                        + "bytes (into offset 100 of the local region) after 1000 of them: its memory was freed or its "
                        + "region deregistered; those 1000 bytes are in place, the rest of the destination is "
                        + "untouched");
        assertThat(reads.landing(id, OWNER, 1000, 1000))
                .as("late bytes find no read")
                .isNull();
        reads.stopped(OWNER, id, TcpReadFailure.COPY_FAILED);
        reads.landed(id, 3000);
        assertThat(readerEvents.ended()).as("ended once").isEqualTo(1);
        assertThat(reads.pending()).isZero();
    }

    /**
     * READ_FAILED behind READ_DATA whose copy into the reader's device is still held: the read ends only once those
     * bytes are in place, so its error counts them.
     */
    @Test
    void aReadFailedBehindBytesStillCopyingToTheDeviceEndsTheReadOnceTheyAreInPlace() throws IOException {
        final RecordingDomainListener deviceEvents = new RecordingDomainListener();
        final TcpDomain deviceReader =
                TcpDomains.open(deviceEvents, 0, 0, Map.of(DeviceMemory.OPTION, HostBackedDeviceMemory.NAME));
        final MemorySegment into = arena.allocate(8192, 4096);
        try (RawAcceptor owner = new RawAcceptor()) {
            final long intoKey = deviceReader.register(into, Device.cuda(0));
            deviceReader.read(new WriteDescriptor()
                    .token(31)
                    .source(into, 0, intoKey, 8192)
                    .target(deviceReader.resolve(owner.address()), 0, 0, 77));
            owner.accept(deviceReader, 0);
            final TcpFrame read = owner.nextRequest(deviceReader);
            owner.sendFrame(TcpFrame.ACK, 1, read.token(), 8192);
            try (RawPeer back = new RawPeer(deviceReader)) {
                back.authenticateAs(
                        deviceReader, owner.address().toBytes(), RawAcceptor.INCARNATION, TcpFrame.FEATURE_READ_FAILED);
                HostBackedDeviceMemory.HOLD.set(true);
                back.send(RawPeer.header(TcpFrame.READ_DATA, read.imm(), 1, 0, 0, 4096))
                        .send(MemorySegment.ofArray(new byte[4096])
                                .fill((byte) 0x5A)
                                .toArray(ValueLayout.JAVA_BYTE))
                        .send(readFailed(2, read.imm(), TcpReadFailure.MEMORY_LOST.code(), 4096));
                for (int poll = 0; poll < 100; poll++) {
                    deviceReader.poll();
                }
                assertThat(deviceEvents.ended()).as("held behind the copy").isZero();

                HostBackedDeviceMemory.HOLD.set(false);
                pollUntil(
                        () -> deviceEvents.ended(31) && back.receivedBytes() >= 2 * TcpFrame.HEADER_LENGTH,
                        deviceReader);

                assertThat(deviceEvents.failed.get(31L))
                        .isInstanceOf(RemoteAccessException.class)
                        .hasMessageContaining("after 4096 of them: its memory was freed");
                assertThat(into.asSlice(0, 4096)
                                .mismatch(MemorySegment.ofArray(new byte[4096]).fill((byte) 0x5A)))
                        .isEqualTo(-1);
                assertThat(into.asSlice(4096).mismatch(MemorySegment.ofArray(new byte[4096])))
                        .isEqualTo(-1);
                assertThat(back.answer(0).type()).isEqualTo(TcpFrame.ACK);
                assertThat(back.answer(1).type()).isEqualTo(TcpFrame.ACK);
                assertThat(back.answer(1).token()).isEqualTo(2);
            }
        } finally {
            HostBackedDeviceMemory.HOLD.set(false);
            deviceReader.close();
        }
    }

    /** A NO_PEER_ROOM refusal answers a READ only where both sides announced READ_FAILED; elsewhere it is malformed. */
    @Test
    void aNoPeerRoomRefusalFailsTheReadWithBackPressureOnlyWhereReadFailuresWereAgreed() throws IOException {
        final MemorySegment into = arena.allocate(4096);
        final long intoKey = reader.register(into, Device.host());
        for (final int features : new int[] {TcpFrame.FEATURE_READ_FAILED, 0}) {
            try (RawAcceptor owner = new RawAcceptor()) {
                final long token = 40L + features;
                reader.read(new WriteDescriptor()
                        .token(token)
                        .source(into, 0, intoKey, 4096)
                        .target(reader.resolve(owner.address()), 0, 0, 77));
                owner.accept(reader, features);
                final TcpFrame read = owner.nextRequest(reader);
                owner.sendFrame(TcpFrame.NACK, TcpRefusal.NO_PEER_ROOM.code(), read.token(), -1);
                pollUntil(() -> readerEvents.ended(token), reader);
            }
        }

        assertThat(readerEvents.failed.get(44L))
                .isInstanceOf(BackPressureException.class)
                .hasMessageContaining("could not serve the READ at offset 0 of length 4096: it has no room for a "
                        + "connection back to this side");
        assertThat(readerEvents.failed.get(40L))
                .isInstanceOf(PeerUnreachableException.class)
                .hasMessageContaining("NACK with unagreed refusal code 9");
        assertThat(TcpDomains.count(reader, TcpCounter.MALFORMED_FRAMES)).isEqualTo(1);
        assertThat(into.mismatch(arena.allocate(4096))).isEqualTo(-1);
    }

    /**
     * An owner at its peer limit NACKs a READ from a reader that announced READ_FAILED, in order behind a write still
     * copying to its device, and ACKs one from a reader that did not, as before.
     */
    @Test
    void anOwnerWithNoPeerRoomRefusesAReadInOrderOnlyToAReaderThatAnnouncedReadFailed() throws IOException {
        final RecordingDomainListener ownerEvents = new RecordingDomainListener();
        final TcpDomain owner = TcpDomains.open(
                ownerEvents,
                0,
                0,
                Map.of(TcpSettings.MAX_PEERS, "1", DeviceMemory.OPTION, HostBackedDeviceMemory.NAME));
        final MemorySegment onDevice = arena.allocate(4096, 4096);
        final MemorySegment onHost = arena.allocate(4096);
        try (RawPeer told = new RawPeer(owner);
                RawPeer untold = new RawPeer(owner)) {
            final long deviceKey = owner.register(onDevice, Device.cuda(0));
            final long hostKey = owner.register(onHost, Device.host());
            final long readerKey = reader.register(arena.allocate(64), Device.host());
            // the owner's one peer slot holds the reader, with a connection open from the owner
            owner.write(new WriteDescriptor()
                    .token(1)
                    .source(onHost, 0, hostKey, 64)
                    .target(owner.resolve(reader.address()), 0, 0, readerKey));
            pollUntil(() -> ownerEvents.ended(1), owner, reader);
            told.features(TcpFrame.FEATURE_READ_FAILED).authenticate(owner);
            untold.features(0).authenticate(owner);
            HostBackedDeviceMemory.HOLD.set(true);
            told.send(RawPeer.header(TcpFrame.WRITE, 0, 1, deviceKey, 0, 4096))
                    .send(new byte[4096])
                    .send(RawPeer.header(TcpFrame.READ, 5, 2, hostKey, 0, 4096));
            untold.send(RawPeer.header(TcpFrame.READ, 6, 1, hostKey, 0, 4096));
            pollUntil(() -> untold.receivedBytes() >= TcpFrame.HEADER_LENGTH, owner);
            for (int poll = 0; poll < 100; poll++) {
                owner.poll();
            }
            assertThat(told.receivedBytes()).as("held behind the copy").isZero();

            HostBackedDeviceMemory.HOLD.set(false);
            pollUntil(() -> told.receivedBytes() >= 2 * TcpFrame.HEADER_LENGTH, owner);

            assertThat(told.answer(0).type()).isEqualTo(TcpFrame.ACK);
            assertThat(told.answer(0).token()).isEqualTo(1);
            assertThat(told.answer(1).type()).isEqualTo(TcpFrame.NACK);
            assertThat(told.answer(1).token()).isEqualTo(2);
            assertThat(TcpRefusal.ofCode(told.answer(1).aux())).isEqualTo(TcpRefusal.NO_PEER_ROOM);
            assertThat(untold.answer(0).type()).isEqualTo(TcpFrame.ACK);
            assertThat(told.closedByPeer() || untold.closedByPeer()).isFalse();
            assertThat(TcpDomains.count(owner, TcpCounter.BACK_PRESSURE)).isEqualTo(2);
        } finally {
            HostBackedDeviceMemory.HOLD.set(false);
            owner.close();
        }
    }

    private static void closesTheConnection(final TcpDomain domain, final int features, final ByteBuffer frame)
            throws IOException {
        try (RawPeer raw = new RawPeer(domain)) {
            raw.features(features).authenticate(domain).send(frame);
            pollUntil(raw::closedByPeer, domain);
        }
    }

    private static ByteBuffer readFailed(final long id, final int readId, final int reason, final long sent) {
        final ByteBuffer header = ByteBuffer.allocate(TcpFrame.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        new TcpFrame(header).encode(TcpFrame.READ_FAILED, readId, reason, id, 0, sent, 0);
        return header;
    }
}
