package dev.transferengine.transport.fabric;

import dev.transferengine.Device;
import dev.transferengine.NetworkAddress;
import dev.transferengine.spi.Domain;
import dev.transferengine.spi.RecordingDomainListener;
import dev.transferengine.spi.WriteDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which peer the target names for an imm (issue 16 item 3 on fabric): on shm the writer, where the target's AV holds
 * it (FI_SOURCE, fi_cq_readfrom), and nobody (null) for a writer the target never addressed; on tcp;ofi_rxm nobody.
 */
class FabricImmSourceTest {

    private final FabricFixture fixture = new FabricFixture();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        fixture.close();
        arena.close();
    }

    /** Records the peer each imm was reserved for (empty: none named). */
    private static final class Sources extends RecordingDomainListener {
        final Map<Integer, Optional<NetworkAddress>> peers = new ConcurrentHashMap<>();

        @Override
        public long reserveImm(final @Nullable NetworkAddress peer, final int imm) {
            peers.put(imm, Optional.ofNullable(peer));
            return super.reserveImm(peer, imm);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void shmNamesEachWriterTheTargetKnowsAndTcpNamesNone(final String provider) {
        FabricFixture.assumeAvailable(provider);
        final Sources events = new Sources();
        final Domain target = fixture.open(provider, 0, events);
        final RecordingDomainListener writerEvents = new RecordingDomainListener();
        final Domain first = fixture.open(provider, 0, writerEvents);
        final Domain second = fixture.open(provider, 0, writerEvents);
        final Domain stranger = fixture.open(provider, 0, writerEvents);
        target.resolve(first.address());
        target.resolve(second.address());
        final MemorySegment dst = arena.allocate(4096, 4096);
        final long dstKey = target.register(dst, Device.host());
        final MemorySegment src = arena.allocate(4096, 4096);

        int imm = 1;
        for (final Domain writer : new Domain[] {first, second, stranger}) {
            writer.write(new WriteDescriptor()
                    .token(imm)
                    .source(src, 0, writer.register(src, Device.host()), 0)
                    .target(writer.resolve(target.address()), dst.address(), 0, dstKey)
                    .imm(true, imm));
            imm++;
        }
        fixture.pollUntil(() -> events.imms.size() == 3);

        if (provider.equals("shm")) {
            assertThat(events.peers.get(1)).contains(first.address());
            assertThat(events.peers.get(2)).contains(second.address());
        } else {
            // tcp;ofi_rxm named the first peer of the AV for every writer on 1.17 (none on 2.1): not asked
            assertThat(events.peers.get(1)).isEmpty();
            assertThat(events.peers.get(2)).isEmpty();
        }
        assertThat(events.peers.get(3)).isEmpty();
    }
}
