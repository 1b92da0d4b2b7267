package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;

import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Objects;
import java.util.UUID;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The keys an shm endpoint publishes and how a peer checks an access against them, without libfabric. */
class FabricShmKeysTest {

    private static final long KEY = 0x1234_5678_9abcL;

    private final Arena arena = Arena.ofShared();
    private final byte[] name = ("fi_shm://test-" + UUID.randomUUID()).getBytes(StandardCharsets.US_ASCII);
    private final NetworkAddress address = FabricAddress.of("shm", name);
    private FabricShmKeys published;
    private FabricShmKeys.View peer;

    @BeforeEach
    void publish() {
        Assumptions.assumeTrue(Files.isWritable(FabricShmKeys.pathOf(name).getParent()), "needs a writable /dev/shm");
        published = Objects.requireNonNull(FabricShmKeys.publish(name, arena));
        published.put(KEY, 4096, 8192, FabricShmKeys.REMOTE_WRITE);
        peer = Objects.requireNonNull(FabricShmKeys.open(name, address, arena));
    }

    @AfterEach
    void close() {
        if (published != null) {
            published.close(); // again after the test closed it: changes nothing
        }
        arena.close();
    }

    @Test
    void anAccessThePeerPublishedIsTaken() {
        assertThat(peer.refusal(KEY, 4096, 4096, true)).isNull();
        assertThat(peer.refusal(KEY, 8192, 0, true)).as("zero bytes at the end").isNull();
    }

    @Test
    void aRevokedOrUnknownKeyIsRefusedAsUnknown() {
        assertThat(published.revoke(KEY)).as("no post was in progress").isTrue();

        assertThat(reason(peer.refusal(KEY, 4096, 0, true))).isEqualTo(RemoteAccessException.Reason.UNKNOWN_KEY);
        assertThat(reason(peer.refusal(KEY + 1, 4096, 8, true))).isEqualTo(RemoteAccessException.Reason.UNKNOWN_KEY);
        assertThat(published.isFree(KEY)).isTrue();
    }

    @Test
    void anAccessOutsideTheRegionOrNotAllowedIsRefusedWithItsReason() {
        assertThat(reason(peer.refusal(KEY, 4096, 4097, true))).isEqualTo(RemoteAccessException.Reason.OUT_OF_BOUNDS);
        assertThat(reason(peer.refusal(KEY, 4095, 1, true))).isEqualTo(RemoteAccessException.Reason.OUT_OF_BOUNDS);
        assertThat(reason(peer.refusal(KEY, 4096, 8, false))).isEqualTo(RemoteAccessException.Reason.NOT_READABLE);
    }

    @Test
    void aRevocationWaitsForAPostInProgressAndGivesUpWhenItNeverEnds() {
        peer.enter();

        assertThat(published.revoke(KEY)).isFalse();
        peer.exit();
        assertThat(published.revoke(KEY)).isTrue();
    }

    @Test
    void aClosedPeerFailsEveryAccessAsUnreachable() {
        published.close();

        assertThat(peer.refusal(KEY, 4096, 8, true)).isInstanceOf(PeerUnreachableException.class);
        assertThat(FabricShmKeys.open(name, address, arena))
                .as("the file is gone")
                .isNull();
    }

    private static RemoteAccessException.Reason reason(final @Nullable TransferEngineException refusal) {
        assertThat(refusal).isInstanceOf(RemoteAccessException.class);
        return ((RemoteAccessException) Objects.requireNonNull(refusal)).reason();
    }
}
