package dev.transferengine.moe;

import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MoeModelTest {

    @Test
    void bf16RoundsToNearestEven() {
        assertThat(Bf16.fromFloat(1.0f)).isEqualTo((short) 0x3F80);
        // 1 + 2^-8 is half way between 1 and 1 + 2^-7: ties go to the even 1.0
        assertThat(Bf16.fromFloat(Float.intBitsToFloat(0x3F808000))).isEqualTo((short) 0x3F80);
        assertThat(Bf16.fromFloat(Float.intBitsToFloat(0x3F818000))).isEqualTo((short) 0x3F82);
        assertThat(Bf16.toFloat(Bf16.fromFloat(-2.5f))).isEqualTo(-2.5f);
        assertThat(Bf16.fromFloat(Float.NaN)).isEqualTo((short) 0x7FC0);
    }

    @Test
    void theGatePicksDistinctExpertsWhoseWeightsSumToOne() {
        final MoeShape shape = new MoeShape(16, 32, 4, 16, 4, 1);
        final MoeModel model = new MoeModel(shape, 7, 2);
        final MemorySegment tokens = MemorySegment.ofArray(new short[16 * 32]);
        model.fillTokens(0, 0, tokens);

        final TokenRouting routing = model.route(tokens);

        for (int t = 0; t < 16; t++) {
            float sum = 0;
            for (int j = 0; j < 4; j++) {
                sum += routing.weight(t, j);
                if (j > 0) {
                    assertThat(routing.weight(t, j)).isLessThanOrEqualTo(routing.weight(t, j - 1));
                }
            }
            assertThat(sum).isCloseTo(1f, org.assertj.core.data.Offset.offset(1e-5f));
        }
        assertThat(new MoeModel(shape, 7, 2).route(tokens)).isEqualTo(routing);
    }

    @Test
    void badShapesAndRoutingsAreRefusedNamingTheProblem() {
        assertThatThrownBy(() -> new MoeShape(1, 8, 2, 6, 4, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("multiple of expertRanks");
        assertThatThrownBy(() -> new MoeShape(1, 8, 9, 8, 4, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("topK");
        assertThatThrownBy(() -> new TokenRouting(1, 2, new int[] {3, 3}, new float[] {0.5f, 0.5f}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("twice");
        assertThatThrownBy(() -> new MoeModel(new MoeShape(1, 8, 2, 8, 4, 1), 1, 1).expertsOfRank(4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expert rank 4");
    }
}
