package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

class TcpMalformedFrameTest {

    private final Arena arena = Arena.ofShared();
    private final RecordingDomainListener targetEvents = new RecordingDomainListener();
    private final RecordingDomainListener goodEvents = new RecordingDomainListener();
    private final TcpDomain target = TcpDomains.open(targetEvents);
    private final TcpDomain good = TcpDomains.open(goodEvents);
    private final MemorySegment region = arena.allocate(64 * 1024);
    private final long rkey;

    TcpMalformedFrameTest() {
        final Random random = new Random(7);
        for (long i = 0; i < region.byteSize(); i++) {
            region.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
        }
        rkey = target.register(region, Device.host());
    }

    @AfterEach
    void close() {
        good.close();
        target.close();
        arena.close();
    }

    @Test
    void corruptFramesCloseTheirConnectionOnly() throws IOException {
        final List<Supplier<ByteBuffer>> corruptions = List.of(
                () -> withInt(RawPeer.header(TcpFrame.WRITE, 0, 1, rkey, 0, 0), 0, 0xDEADBEEF),
                () -> withByte(RawPeer.header(TcpFrame.WRITE, 0, 1, rkey, 0, 0), 4, (byte) (TcpFrame.VERSION + 1)),
                () -> withByte(RawPeer.header(TcpFrame.WRITE, 0, 1, rkey, 0, 0), 5, (byte) 99),
                () -> RawPeer.header(TcpFrame.ACK, 0, 1, 0, 0, 0),
                () -> RawPeer.header(TcpFrame.NACK, 0, 1, 0, 0, 0),
                () -> RawPeer.header(TcpFrame.HELLO, 0, 1, 0, 0, 7),
                () -> RawPeer.header(TcpFrame.WRITE, 0, 1, rkey, 0, -5),
                () -> RawPeer.header(TcpFrame.WRITE_IMM, 0, 1, rkey, 0, Long.MAX_VALUE),
                () -> RawPeer.header(TcpFrame.IMM, 0, 1, rkey, 0, 5),
                () -> RawPeer.header(TcpFrame.WRITEV, 0, 1, rkey, 0, 16), // a WRITEV of 0 pages
                () -> RawPeer.header(TcpFrame.SEND, 0, 1, 0, 0, 1L << 33));
        for (final Supplier<ByteBuffer> corruption : corruptions) {
            try (RawPeer raw = new RawPeer(target)) {
                raw.authenticate(target).send(corruption.get());
                pollUntil(raw::closedByPeer, target);
            }
        }
        final List<ByteBuffer> beforeHello = List.of(
                RawPeer.header(TcpFrame.WRITE, 0, 1, rkey, 0, 0),
                RawPeer.header(TcpFrame.AUTH, 0, 1, 0, 0, 32),
                withByte(RawPeer.header(TcpFrame.HELLO, 0, 1, 0, 0, 40), 6, (byte) 1),
                RawPeer.header(TcpFrame.HELLO, 0, 1, 0, 0, 1000),
                RawPeer.header(TcpFrame.HELLO, 0, 1, 0, 0, 2),
                ByteBuffer.allocate(56)
                        .put(RawPeer.header(TcpFrame.HELLO, 0, 1, 0, 0, 8))
                        .put(new byte[] {9, 9, 9, 9, 9, 9, 9, 9})
                        .flip());
        for (final ByteBuffer bytes : beforeHello) {
            try (RawPeer raw = new RawPeer(target)) {
                raw.send(bytes);
                pollUntil(raw::closedByPeer, target);
            }
        }

        assertThat(TcpDomains.count(target, TcpCounter.MALFORMED_FRAMES)).isEqualTo(corruptions.size());
        assertThat(TcpDomains.count(target, TcpCounter.HANDSHAKE_MALFORMED)).isEqualTo(beforeHello.size());
        assertDomainStillServesAGoodPeer();
    }

    @Test
    void seededRandomBytesNeverHurtTheDomain() throws IOException {
        final Random random = new Random(20_251_129);
        int expectedDrops = 0;
        for (int round = 0; round < 300; round++) {
            try (RawPeer raw = new RawPeer(target)) {
                switch (round % 3) {
                    case 0 -> {
                        raw.send(randomBytes(random, 48 + random.nextInt(500)));
                        expectedDrops++;
                        pollUntil(raw::closedByPeer, target);
                    }
                    case 1 -> {
                        raw.authenticate(target).send(randomBytes(random, 48 + random.nextInt(500)));
                        expectedDrops++;
                        pollUntil(raw::closedByPeer, target);
                    }
                    default -> {
                        // A plausible write to a wrong key with one random byte flipped: refused or dropped,
                        // never placed.
                        final ByteBuffer header = RawPeer.header(
                                TcpFrame.WRITE_IMM, 1, 1, rkey ^ (1L << 40), random.nextInt(1024), random.nextInt(256));
                        final int at = random.nextInt(TcpFrame.HEADER_LENGTH);
                        header.put(at, (byte) (header.get(at) ^ (1 + random.nextInt(255))));
                        raw.authenticate(target).send(header).send(randomBytes(random, random.nextInt(300)));
                        for (int i = 0; i < 20; i++) {
                            target.poll();
                        }
                    }
                }
            }
        }

        assertThat(TcpDomains.count(target, TcpCounter.MALFORMED_FRAMES)
                        + TcpDomains.count(target, TcpCounter.HANDSHAKE_MALFORMED))
                .isGreaterThanOrEqualTo(expectedDrops);
        assertDomainStillServesAGoodPeer();
    }

    @Test
    void wellFramedButInvalidRequestsAreRefusedAndTheConnectionStays() throws IOException {
        try (RawPeer raw = new RawPeer(target)) {
            final ByteBuffer flagged = RawPeer.header(TcpFrame.WRITE, 0, 1, rkey, 0, 16);
            flagged.putShort(6, (short) 1);
            raw.authenticate(target)
                    .send(flagged)
                    .send(new byte[16])
                    .send(RawPeer.header(TcpFrame.WRITE, 0, 2, rkey + 1, 0, 1000))
                    .send(new byte[1000])
                    .send(RawPeer.header(TcpFrame.WRITE_IMM, 77, 3, rkey, 100, 4))
                    .send(new byte[] {1, 2, 3, 4});
            pollUntil(() -> raw.receivedBytes() >= 3 * TcpFrame.HEADER_LENGTH, target);

            final TcpFrame first = raw.answer(0);
            assertThat(first.type()).isEqualTo(TcpFrame.NACK);
            assertThat(first.token()).isEqualTo(1);
            assertThat(first.aux()).isEqualTo(TcpRefusal.MALFORMED.code());
            final TcpFrame second = raw.answer(1);
            assertThat(second.type()).isEqualTo(TcpFrame.NACK);
            assertThat(second.token()).isEqualTo(2);
            assertThat(second.aux()).isEqualTo(TcpRefusal.UNKNOWN_KEY.code());
            final TcpFrame third = raw.answer(2);
            assertThat(third.type()).isEqualTo(TcpFrame.ACK);
            assertThat(third.token()).isEqualTo(3);
            assertThat(third.length()).isEqualTo(4);
            assertThat(region.asSlice(100, 4).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
                    .containsExactly(1, 2, 3, 4);
            assertThat(targetEvents.imms).containsExactly(77);
            assertThat(raw.closedByPeer()).isFalse();
        }
    }

    private void assertDomainStillServesAGoodPeer() {
        final MemorySegment before = arena.allocate(region.byteSize()).copyFrom(region);
        final MemorySegment source = arena.allocate(1024).fill((byte) 0x42);
        final long sourceKey = good.register(source, Device.host());
        good.write(new WriteDescriptor()
                .token(1)
                .source(source, 0, sourceKey, 1024)
                .target(good.resolve(target.address()), 0, 2048, rkey)
                .imm(true, 99));
        pollUntil(() -> goodEvents.ended() == 1, good, target);

        assertThat(goodEvents.completed).containsEntry(1L, 1024L);
        assertThat(targetEvents.imms).containsExactly(99);
        assertThat(region.asSlice(2048, 1024).mismatch(source)).isEqualTo(-1);
        assertThat(region.asSlice(0, 2048).mismatch(before.asSlice(0, 2048))).isEqualTo(-1);
        assertThat(target.failure()).isNull();
    }

    private static byte[] randomBytes(final Random random, final int length) {
        final byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    private static ByteBuffer withInt(final ByteBuffer header, final int at, final int value) {
        return header.order(ByteOrder.LITTLE_ENDIAN).putInt(at, value);
    }

    private static ByteBuffer withByte(final ByteBuffer header, final int at, final byte value) {
        return header.put(at, value);
    }
}
