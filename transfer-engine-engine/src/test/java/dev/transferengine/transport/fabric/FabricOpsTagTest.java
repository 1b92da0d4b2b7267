package dev.transferengine.transport.fabric;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FabricOpsTagTest {

    /**
     * libfabric's rule: a receive (tag 0, ignore bits the size tag of its buffer) matches a send when the send's tag
     * has no bit outside them.
     */
    private static boolean matches(final long sendTag, final long bufferBytes) {
        return (sendTag & ~FabricOps.sizeTag(bufferBytes)) == 0;
    }

    private static FabricPoolSizes.View peerWith(final int... sizes) {
        final FabricPoolSizes pools = new FabricPoolSizes();
        return pools.learn(1, sizes, -1);
    }

    @Test
    void aSendTaggedByItsLengthMatchesTheBuffersOfAtLeastItsSizeClass() {
        for (long buffer = 1; buffer <= 5000; buffer++) {
            for (long send = 0; send <= 5000; send++) {
                assertThat(matches(FabricOps.sizeTag(send), buffer))
                        .as("send of %d bytes into a buffer of %d", send, buffer)
                        .isEqualTo(FabricPoolSizes.sizeClass(send) <= FabricPoolSizes.sizeClass(buffer));
            }
        }
    }

    @Test
    void everySendThatAPoolTakesMatchesOnlyBuffersItFitsAndALongerOneIsRefused() {
        final int[][] peers = {{1000}, {100, 3000}, {64, 4096}, {1, 2, 3, 1024, 1025}, {7, 500, 600, 70_000}};
        for (final int[] sizes : peers) {
            final FabricPoolSizes.View view = peerWith(sizes);
            final int largest = java.util.Arrays.stream(sizes).max().orElseThrow();
            for (long send = 0; send <= largest + 2; send++) {
                final long tag = FabricPoolSizes.tag(view, send);
                if (send > largest) {
                    assertThat(tag).as("send of %d to %s", send, sizes).isEqualTo(FabricPoolSizes.REFUSED);
                    continue;
                }
                if (tag == FabricPoolSizes.REFUSED) {
                    // only where two pools share a size class and the send fits the larger one alone
                    assertThat(sizeBetweenTwoPoolsOfOneClass(sizes, send))
                            .as("send of %d", send)
                            .isTrue();
                    continue;
                }
                boolean landsSomewhere = false;
                for (final int buffer : sizes) {
                    if (matches(tag, buffer)) {
                        landsSomewhere = true;
                        assertThat(buffer)
                                .as("send of %d matches buffer %d", send, buffer)
                                .isGreaterThanOrEqualTo((int) send);
                    }
                }
                assertThat(landsSomewhere).as("send of %d to %s", send, sizes).isTrue();
            }
        }
    }

    private static boolean sizeBetweenTwoPoolsOfOneClass(final int[] sizes, final long send) {
        for (final int a : sizes) {
            for (final int b : sizes) {
                if (a < send && send <= b && FabricPoolSizes.sizeClass(a) == FabricPoolSizes.sizeClass(b)) {
                    return true;
                }
            }
        }
        return false;
    }

    @Test
    void theRefusalNamesTheSendAndTheLargestPool() {
        final FabricPoolSizes.View view = peerWith(100, 3000);
        assertThat(FabricPoolSizes.refusal(view, 3001, "peer")).contains("3001").contains("3000");
    }

    @Test
    void sizesThatCameInAnyOrderMergeAPeerWithoutPoolsWaitsAndASilentPeerIsSentToByLength() {
        final FabricPoolSizes pools = new FabricPoolSizes();
        pools.learn(1, new int[] {3000}, -1);
        final FabricPoolSizes.View view = pools.learn(1, new int[] {100}, -1);
        assertThat(FabricPoolSizes.tag(view, 101)).isEqualTo(FabricOps.sizeTag(4096));
        assertThat(FabricPoolSizes.tag(peerWith(), 5000)).isEqualTo(FabricPoolSizes.NO_POOL_YET);
        final FabricPoolSizes.View silent = pools.ask(2);
        pools.settle(silent, true);
        assertThat(FabricPoolSizes.tag(silent, 5000)).isEqualTo(FabricOps.sizeTag(5000));
    }

    @Test
    void aPoolWideningItsClassIsAdvertisedOnceAsItsClassesSmallestAndLargest() {
        final FabricPoolSizes pools = new FabricPoolSizes();
        assertThat(pools.posted(1, 1000)).isTrue();
        assertThat(pools.posted(2, 1000)).isFalse();
        assertThat(pools.posted(3, 600)).isTrue();
        assertThat(pools.posted(4, 800)).isFalse();
        assertThat(pools.posted(5, 100)).isTrue();
        assertThat(pools.posted(5, 100)).as("the same buffer posted again").isFalse();
        assertThat(pools.advertised()).containsExactly(100, 100, 600, 1000);
    }

    @Test
    void aSizeStopsBeingAdvertisedOnceItsLastBufferIsWithdrawn() {
        final FabricPoolSizes pools = new FabricPoolSizes();
        pools.posted(1, 100);
        pools.posted(2, 3000);
        pools.posted(3, 3000);
        pools.posted(4, 2500);
        final long before = pools.version();
        assertThat(pools.withdrawn(2)).as("a 3000-byte buffer is left").isFalse();
        assertThat(pools.withdrawn(7)).as("a token never posted").isFalse();
        assertThat(pools.withdrawn(3)).isTrue();
        assertThat(pools.advertised()).containsExactly(100, 100, 2500, 2500);
        assertThat(pools.withdrawn(4)).isTrue();
        assertThat(pools.advertised()).containsExactly(100, 100);
        assertThat(pools.version()).isEqualTo(before + 2);
        assertThat(pools.withdrawn(4)).as("withdrawn twice").isFalse();
    }

    @Test
    void aSenderKeepsTheNewestSizesSoALateOlderMessageCannotWidenWhatANewerNarrowed() {
        final FabricPoolSizes pools = new FabricPoolSizes();
        pools.learn(1, new int[] {100, 100, 3000, 3000}, 2);
        final FabricPoolSizes.View narrowed = pools.learn(1, new int[] {100, 100}, 3);
        assertThat(FabricPoolSizes.tag(narrowed, 2000)).isEqualTo(FabricPoolSizes.REFUSED);
        final FabricPoolSizes.View late = pools.learn(1, new int[] {100, 100, 3000, 3000}, 2);
        assertThat(FabricPoolSizes.tag(late, 2000)).isEqualTo(FabricPoolSizes.REFUSED);
        assertThat(FabricPoolSizes.tag(late, 100)).isEqualTo(FabricOps.sizeTag(128));
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
