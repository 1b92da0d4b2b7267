package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A peer process dies while writes to it are in flight: they end (failed), and the domain lives on. */
class FabricPeerFailureTest {

    private static final long REGION = 64L << 20;
    private static final long WRITE = 1L << 20;
    private static final int WRITES = 256;

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();
    private @Nullable ChildJvm peer;

    @AfterEach
    void close() {
        if (peer != null) {
            peer.close();
        }
        fixture.close();
        arena.close();
    }

    @Test
    void writesInFlightToAKilledPeerFailAndTheDomainKeepsServingOthers() throws Exception {
        FabricFixture.assumeAvailable("tcp");
        final ChildJvm child =
                ChildJvm.start(FabricFixture.childJvm(FabricPeerProcess.class, "tcp", Long.toString(REGION)));
        peer = child;
        final String[] ready = child.awaitLine("READY ").split(" ", -1);
        final NetworkAddress remote = NetworkAddress.parse(ready[1]);
        final long remoteBase = Long.parseLong(ready[2]);
        final long rkey = Long.parseLong(ready[3]);

        final RecordingDomainListener events = new RecordingDomainListener();
        final Domain domain = fixture.open("tcp", 0, events);
        final MemorySegment src = arena.allocate(REGION, 4096);
        final long srcKey = domain.register(src, Device.host());
        final long handle = domain.resolve(remote);
        for (int i = 0; i < WRITES; i++) {
            final long offset = (i * WRITE) % REGION;
            domain.write(new WriteDescriptor()
                    .token(i)
                    .source(src, offset, srcKey, WRITE)
                    .target(handle, remoteBase, offset, rkey)
                    .imm(true, i));
        }
        fixture.pollUntil(() -> !events.completed.isEmpty() || !events.failed.isEmpty());
        child.process().destroyForcibly();
        assertThat(child.process().waitFor(30, TimeUnit.SECONDS)).isTrue();

        fixture.pollUntil(() -> events.completed.size() + events.failed.size() == WRITES);

        assertThat(events.failed).isNotEmpty();
        assertThat(events.failed.values()).allSatisfy(error -> assertThat(error)
                .isInstanceOf(PeerUnreachableException.class)
                .hasMessageContaining("tcp;ofi_rxm"));
        assertThat(domain.peers()).anySatisfy(info -> {
            assertThat(info.address()).isEqualTo(remote);
            assertThat(info.unreachable()).isTrue();
        });
        assertThat(domain.failure()).isNull();

        final RecordingDomainListener targetEvents = new RecordingDomainListener();
        final Domain target = fixture.open("tcp", 0, targetEvents);
        final MemorySegment dst = arena.allocate(WRITE, 4096);
        final long dstKey = target.register(dst, Device.host());
        domain.write(new WriteDescriptor()
                .token(-1)
                .source(src, 0, srcKey, WRITE)
                .target(domain.resolve(target.address()), dst.address(), 0, dstKey)
                .imm(true, 7));
        fixture.pollUntil(() -> events.ended(-1) && targetEvents.imms.contains(7));
        assertThat(events.completed).containsKey(-1L);
        assertThat(List.copyOf(targetEvents.imms)).containsExactly(7);
    }
}
