package dev.transferengine.transport.fabric;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FabricOpsTagTest {

    /** libfabric's rule: a receive (tag 0, ignore mask) matches a send when the send's tag has no bit outside it. */
    private static boolean matches(final long sendBytes, final long bufferBytes) {
        return (FabricOps.sizeTag(sendBytes) & ~FabricOps.fitMask(bufferBytes)) == 0;
    }

    @Test
    void aSendMatchesExactlyTheBuffersOfAtLeastItsSizeRoundedUpToAPowerOfTwo() {
        for (long buffer = 1; buffer <= 5000; buffer++) {
            final long fits = Long.highestOneBit(buffer);
            for (long send = 0; send <= 5000; send++) {
                assertThat(matches(send, buffer))
                        .as("send of %d bytes into a buffer of %d", send, buffer)
                        .isEqualTo(send <= fits);
            }
        }
    }

    @Test
    void largeSizesKeepTheirClass() {
        assertThat(matches(1L << 40, 1L << 40)).isTrue();
        assertThat(matches((1L << 40) + 1, 1L << 40)).isFalse();
        assertThat(matches(64 * 1024, 64 * 1024)).isTrue();
        assertThat(matches(64 * 1024 + 1, 128 * 1024 - 1)).isFalse();
    }

    /** shm before 1.19 matches held tagged messages with a stale ignore mask: it stays untagged (FabricEndpoint). */
    @Test
    void onlyShmBeforeLibfabric119StaysUntagged() {
        assertThat(FabricEndpoint.tagsMatchBuffersThatFit("shm", 1 << 16 | 17)).isFalse();
        assertThat(FabricEndpoint.tagsMatchBuffersThatFit("shm", 1 << 16 | 18)).isFalse();
        assertThat(FabricEndpoint.tagsMatchBuffersThatFit("shm", 1 << 16 | 19)).isTrue();
        assertThat(FabricEndpoint.tagsMatchBuffersThatFit("shm", 2 << 16 | 1)).isTrue();
        assertThat(FabricEndpoint.tagsMatchBuffersThatFit("tcp", 1 << 16 | 17)).isTrue();
    }
}
