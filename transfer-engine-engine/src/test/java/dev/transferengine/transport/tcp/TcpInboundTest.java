package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.spi.RecordingDomainListener;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

/** Drives the target side of a domain byte by byte through a raw socket. */
class TcpInboundTest {

    private final Arena arena = Arena.ofShared();
    private final RecordingDomainListener targetEvents = new RecordingDomainListener();
    private @Nullable TcpDomain opened;

    @AfterEach
    void close() {
        if (opened != null) {
            opened.close();
        }
        arena.close();
    }

    @Test
    void deregisteringARegionWhileItsWriteArrivesStopsPlacementAndRefusesTheWrite() throws IOException {
        final TcpDomain target = TcpDomains.open(targetEvents);
        opened = target;
        final MemorySegment region = arena.allocate(1000).fill((byte) 0);
        final long rkey = target.register(region, Device.host());
        try (RawPeer raw = new RawPeer(target)) {
            final byte[] firstPart = new byte[100];
            java.util.Arrays.fill(firstPart, (byte) 1);
            raw.authenticate(target)
                    .send(RawPeer.header(TcpFrame.WRITE_IMM, 5, 1, rkey, 0, 1000))
                    .send(firstPart);
            pollUntil(() -> region.get(ValueLayout.JAVA_BYTE, 99) == 1, target);

            target.deregister(rkey);
            final byte[] rest = new byte[900];
            java.util.Arrays.fill(rest, (byte) 2);
            raw.send(rest);
            pollUntil(() -> raw.receivedBytes() >= TcpFrame.HEADER_LENGTH, target);

            final TcpFrame answer = raw.answer(0);
            assertThat(answer.type()).isEqualTo(TcpFrame.NACK);
            assertThat(answer.aux()).isEqualTo(TcpRefusal.REGION_DEREGISTERED.code());
            assertThat(region.asSlice(100, 900).mismatch(arena.allocate(900))).isEqualTo(-1);
            assertThat(targetEvents.imms).isEmpty();
            assertThat(raw.closedByPeer()).isFalse();
        }
    }

    @Test
    void aPeerThatStopsReadingAnswersIsPausedAndEveryRequestIsAnsweredInOrderOnceItReads() throws IOException {
        final TcpDomain target = TcpDomains.open(targetEvents, 0, 0, Map.of(TcpTransport.SOCKET_BUFFER_OPTION, "4096"));
        opened = target;
        final long rkey = target.register(arena.allocate(64), Device.host());
        final int requests = 8_000;
        final ByteBuffer frames = ByteBuffer.allocate(requests * TcpFrame.HEADER_LENGTH);
        for (int i = 0; i < requests; i++) {
            frames.put(RawPeer.header(TcpFrame.IMM, i, i + 1, rkey, 8, 0));
        }
        try (RawPeer raw = new RawPeer(target, 4096)) {
            raw.authenticate(target);
            // Answers (384 KB) far exceed every buffer on the way back, so the target must stop reading for a while.
            raw.send(frames.flip(), target);
            pollUntil(() -> raw.receivedBytes() == requests * TcpFrame.HEADER_LENGTH, target);

            for (int i = 0; i < requests; i++) {
                final TcpFrame answer = raw.answer(i);
                assertThat(answer.type()).isEqualTo(TcpFrame.ACK);
                assertThat(answer.token()).isEqualTo(i + 1);
            }
            assertThat(targetEvents.imms).hasSize(requests);
            assertThat(targetEvents.imms.get(requests - 1)).isEqualTo(requests - 1);
        }
    }
}
