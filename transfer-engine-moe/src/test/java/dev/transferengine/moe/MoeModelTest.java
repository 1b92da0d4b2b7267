package dev.transferengine.moe;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

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

    @Test
    void anExpertIsTheLowRankMatmulInFloatRoundedToBf16() {
        // H not a multiple of the 256 lanes whose sums the GPU kernel adds as a tree
        final int hidden = 700;
        final int width = 3;
        final ExpertWeights weights = new ExpertWeights(11, hidden, width, 0, 2);
        final MemorySegment in = MemorySegment.ofArray(new short[hidden]);
        new MoeModel(new MoeShape(1, hidden, 1, 2, 1, 1), 11, width).fillTokens(0, 0, in);
        final MemorySegment out = MemorySegment.ofArray(new short[hidden]);

        weights.apply(1, in, 0, out, 0);

        final double[] inner = new double[width];
        for (int i = 0; i < hidden; i++) {
            for (int r = 0; r < width; r++) {
                inner[r] += Bf16.toFloat(in.getAtIndex(ValueLayout.JAVA_SHORT, i)) * weights.down(1)[i * width + r];
            }
        }
        for (int h = 0; h < hidden; h++) {
            double exact = 0;
            for (int r = 0; r < width; r++) {
                exact += inner[r] * weights.up(1)[r * hidden + h];
            }
            // bf16 keeps 8 significant bits: rounding is within 2^-9 of the value, float sums add far less
            assertThat((double) Bf16.toFloat(out.getAtIndex(ValueLayout.JAVA_SHORT, h)))
                    .as("output %d", h)
                    .isCloseTo(exact, org.assertj.core.data.Offset.offset(Math.abs(exact) / 256 + 1e-5));
        }
    }

    @Test
    void gpuExpertsRefuseAWidthTheirSharedMemoryCannotHold() {
        final MoeModel model = new MoeModel(new MoeShape(1, 8, 1, 2, 1, 1), 1, 33);
        assertThatThrownBy(() -> new MoeGpuExperts(model, 0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("width up to 32, was 33");
    }
}
