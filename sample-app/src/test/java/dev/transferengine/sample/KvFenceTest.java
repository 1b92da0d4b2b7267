package dev.transferengine.sample;

import dev.transferengine.Device;
import dev.transferengine.MemoryRegion;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.SingleWrite;
import dev.transferengine.TransferEngine;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.sample.kv.DecodeNode;
import dev.transferengine.sample.kv.KvSessionGrant;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Decode fences an abandoned transfer: a session that timed out makes the next one re-key the page pool, so a late
 * write with the abandoned session's descriptor is refused and leaves the reused pages untouched.
 */
class KvFenceTest {

    private static SampleNode decode;

    @BeforeAll
    static void start() {
        decode = SampleNode.start(Role.DECODE, "sample.kv.receive-timeout=200ms");
    }

    @AfterAll
    static void stop() {
        decode.close();
    }

    @Test
    void aWriteWithTheDescriptorOfAnAbandonedSessionIsRefusedOnceThePoolIsReused() throws Exception {
        final DecodeNode node = decode.bean(DecodeNode.class);
        final KvSessionGrant abandoned = node.open(2);
        // Nothing is written: the session times out, and decode takes a new one only after that.
        final KvSessionGrant reused = await().atMost(Duration.ofSeconds(30))
                .ignoreException(BusyException.class)
                .until(() -> node.open(2), grant -> true);

        assertThat(reused.region()).isNotEqualTo(abandoned.region());
        try (TransferEngine late = TransferEngine.builder().build();
                Arena arena = Arena.ofShared()) {
            final MemorySegment data = arena.allocate(4096);
            data.fill((byte) 0x6B);
            final MemoryRegion source = late.register(data, Device.host());
            final RegionDescriptor old = RegionDescriptor.parse(abandoned.region());

            assertThatThrownBy(() ->
                            late.submit(SingleWrite.of(source, 0, 4096, old, 0)).get(30, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(RemoteAccessException.class);
            late.submit(SingleWrite.of(source, 0, 4096, RegionDescriptor.parse(reused.region()), 0))
                    .get(30, TimeUnit.SECONDS);
        }
    }
}
