package dev.transferengine.core;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class ShardingTest {

    @ParameterizedTest
    @CsvSource({
        "1000, 2, 8192", // small write: one shard carries it all, the other is zero-length
        "10485760, 2, 5242880",
        "24577, 3, 16384", // ceil first: a floor would lose the last byte
        "0, 4, 0",
        "8192, 4, 8192",
    })
    void shardSizeIsCeilOfLengthOverShardsRoundedUpTo8KiB(final long length, final int shards, final long expected) {
        assertThat(Sharding.shardSize(length, shards)).isEqualTo(expected);
    }

    @Test
    void shardsCoverEveryByteExactlyOnceAndEmptyShardsSitAtOffsetZero() {
        final SplittableRandom random = new SplittableRandom(42);
        for (int run = 0; run < 10_000; run++) {
            final long length = random.nextLong(0, 1L << 26);
            final int shards = random.nextInt(1, 5);
            final long size = Sharding.shardSize(length, shards);
            long covered = 0;
            for (int j = 0; j < shards; j++) {
                final long offset = Sharding.shardOffset(length, size, j);
                final long shardLength = Sharding.shardLength(length, size, j);
                if (shardLength == 0) {
                    assertThat(offset).isZero();
                } else {
                    assertThat(offset).isEqualTo(covered);
                    covered += shardLength;
                }
            }
            assertThat(covered).as("length %d over %d shards", length, shards).isEqualTo(length);
        }
    }

    @Test
    void smallWriteOverTwoShardsIsOneFullShardPlusOneEmpty() {
        final long size = Sharding.shardSize(1000, 2);
        assertThat(Sharding.shardLength(1000, size, 0)).isEqualTo(1000);
        assertThat(Sharding.shardLength(1000, size, 1)).isZero();
        assertThat(Sharding.shardOffset(1000, size, 1)).isZero();
    }

    @ParameterizedTest
    @CsvSource({"10, 4, 3, 4", "3, 4, 1, 3", "1, 4, 1, 1", "8, 4, 2, 4", "9, 2, 5, 2", "0, 4, 1, 0"})
    void pagesAreCutIntoAtMostNContiguousNonEmptyRanges(
            final int items, final int parts, final int rangeSize, final int rangeCount) {
        assertThat(Sharding.rangeSize(items, parts)).isEqualTo(rangeSize);
        assertThat(Sharding.rangeCount(items, parts)).isEqualTo(rangeCount);
    }

    @Test
    void shardBytesSlicesKeepTheRemainderOnTheLastNic() {
        for (long length = 0; length < 200; length++) {
            for (int nics = 1; nics <= 4; nics++) {
                long covered = 0;
                for (int nic = 0; nic < nics; nic++) {
                    assertThat(Sharding.byteSliceOffset(length, nics, nic)).isEqualTo(covered);
                    covered += Sharding.byteSliceLength(length, nics, nic);
                }
                assertThat(covered).isEqualTo(length);
            }
        }
    }
}
