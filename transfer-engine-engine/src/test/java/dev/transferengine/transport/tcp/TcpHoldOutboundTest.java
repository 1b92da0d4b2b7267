package dev.transferengine.transport.tcp;

import dev.transferengine.Device;
import dev.transferengine.spi.RecordingDomainListener;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.Test;

import static dev.transferengine.transport.tcp.TcpDomains.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;

class TcpHoldOutboundTest {

    @Test
    void holdingOneNicDeliversTheOtherNicsLaterWriteFirst() {
        final RecordingDomainListener initiatorEvents = new RecordingDomainListener();
        // Both target NICs report to one listener, as the NICs of one group do.
        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        try (Arena arena = Arena.ofShared();
             TcpDomain nic0 = TcpDomains.open(initiatorEvents, 0);
             TcpDomain nic1 = TcpDomains.open(initiatorEvents, 1);
             TcpDomain target0 = TcpDomains.open(targetEvents, 0);
             TcpDomain target1 = TcpDomains.open(targetEvents, 1)) {
            final MemorySegment source = arena.allocate(4096).fill((byte) 1);
            final long key0 = nic0.register(source, Device.host());
            final long key1 = nic1.register(source, Device.host());
            final MemorySegment destination = arena.allocate(8192);
            final long rkey0 = target0.register(destination, Device.host());
            final long rkey1 = target1.register(destination, Device.host());
            final long peer0 = nic0.resolve(target0.address());
            final long peer1 = nic1.resolve(target1.address());

            nic0.holdOutbound(true);
            nic0.write(1, source, 0, key0, 4096, peer0, 0, 0, rkey0, true, 1);
            nic1.write(2, source, 0, key1, 4096, peer1, 0, 4096, rkey1, true, 2);
            pollUntil(() -> initiatorEvents.writesDone.containsKey(2L), nic0, nic1, target0, target1);
            for (int i = 0; i < 100; i++) {
                nic0.poll();
                nic1.poll();
                target0.poll();
                target1.poll();
            }
            assertThat(targetEvents.imms).containsExactly(2);
            assertThat(initiatorEvents.writesDone).containsOnlyKeys(2L);

            nic0.holdOutbound(false);
            pollUntil(() -> initiatorEvents.writesEnded() == 2, nic0, nic1, target0, target1);

            assertThat(targetEvents.imms).containsExactly(2, 1);
            assertThat(initiatorEvents.writesFailed).isEmpty();
        }
    }
}
