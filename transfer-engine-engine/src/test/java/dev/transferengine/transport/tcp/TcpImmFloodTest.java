package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.EngineCounter;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.TransferEngine;

import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.util.List;

import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

/** A peer floods an engine with zero-byte imm writes of distinct values: a bounded number is credited, the rest refused. */
class TcpImmFloodTest {

    @Test
    void distinctUnexpectedImmsBeyondTheBoundAreRefusedWithAReasonAndCounted() throws Exception {
        final int bound = 100;
        final int batches = 20;
        final int perBatch = 500;
        try (TransferEngine engine = TransferEngine.builder()
                        .transport("tcp")
                        .maxUnexpectedImms(bound)
                        .build();
                Arena arena = Arena.ofShared()) {
            final RegionDescriptor region =
                    engine.register(arena.allocate(4096), Device.host()).descriptor();
            final long rkey = region.nic(0).rkey();
            try (RawPeer raw = new RawPeer(TcpAddress.toSocketAddress(engine.mainAddress()), 0)) {
                raw.authenticate(engine.mainAddress(), List.of(), () -> {});
                int imm = 0;
                for (int batch = 1; batch <= batches; batch++) {
                    final ByteBuffer frames = ByteBuffer.allocate(perBatch * TcpFrame.HEADER_LENGTH);
                    for (int i = 0; i < perBatch; i++, imm++) {
                        frames.put(RawPeer.header(TcpFrame.IMM, imm, imm + 1, rkey, 0, 0));
                    }
                    raw.send(frames.flip());
                    final int answers = batch * perBatch;
                    pollUntil(() -> raw.receivedBytes() >= answers * TcpFrame.HEADER_LENGTH);
                }
                int acks = 0;
                int refusals = 0;
                for (int i = 0; i < batches * perBatch; i++) {
                    final TcpFrame answer = raw.answer(i);
                    if (answer.type() == TcpFrame.ACK) {
                        acks++;
                    } else if (answer.aux() == TcpRefusal.IMM_NOT_ADMITTED.code()) {
                        refusals++;
                    }
                }
                // One peer alone holds half the bound: the other half stays for another peer (issue 16 item 3).
                assertThat(acks).isEqualTo(bound / 2);
                assertThat(refusals).isEqualTo(batches * perBatch - acks);
                assertThat(engine.metrics().counter(EngineCounter.IMMS_REFUSED)).isGreaterThanOrEqualTo(refusals);
                assertThat(raw.closedByPeer()).isFalse();
            }
        }
    }
}
