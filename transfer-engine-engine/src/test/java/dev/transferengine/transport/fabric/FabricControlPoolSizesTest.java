package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FabricControlPoolSizesTest {

    private static final NetworkAddress SELF = FabricAddress.of("tcp", new byte[] {1, 2, 3, 4, 5, 6, 7, 8});

    private static FabricControl.Received arrive(final FabricControl control, final MemorySegment message) {
        MemorySegment.copy(message, 0, control.receiveBuffer(0), 0, message.byteSize());
        return control.decode(0, (int) message.byteSize());
    }

    @Test
    void aQuestionAndAnAnswerArriveAsSentWithTheirSendersAddress() {
        try (Arena arena = Arena.ofConfined()) {
            final FabricControl control = new FabricControl(arena);
            assertThat(arrive(control, FabricControl.poolQuery(SELF))).isEqualTo(new FabricControl.PoolQuery(SELF));
            final FabricControl.Received sizes =
                    arrive(control, FabricControl.poolSizes(SELF, new int[] {100, 100, 600, 3000}, 7));
            assertThat(sizes).isInstanceOf(FabricControl.PoolSizes.class);
            assertThat(((FabricControl.PoolSizes) sizes).peer()).isEqualTo(SELF);
            assertThat(((FabricControl.PoolSizes) sizes).sizes()).containsExactly(100, 100, 600, 3000);
            assertThat(((FabricControl.PoolSizes) sizes).version()).isEqualTo(7);
        }
    }

    /** An engine before the sizes' version sends none: its sizes arrive with version -1 (merged, never replaced). */
    @Test
    void anAnswerWithoutAVersionArrivesWithVersionMinusOne() {
        try (Arena arena = Arena.ofConfined()) {
            final FabricControl control = new FabricControl(arena);
            final MemorySegment whole = FabricControl.poolSizes(SELF, new int[] {100, 3000}, 7);
            final FabricControl.Received sizes = arrive(control, whole.asSlice(0, whole.byteSize() - 8));
            assertThat(((FabricControl.PoolSizes) sizes).sizes()).containsExactly(100, 3000);
            assertThat(((FabricControl.PoolSizes) sizes).version()).isEqualTo(-1);
        }
    }

    @Test
    void anAnswerCutShortIsDroppedAsMalformed() {
        try (Arena arena = Arena.ofConfined()) {
            final FabricControl control = new FabricControl(arena);
            final MemorySegment whole = FabricControl.poolSizes(SELF, new int[] {100, 3000}, 1);
            assertThat(arrive(control, whole.asSlice(0, whole.byteSize() - 10)))
                    .isInstanceOf(FabricControl.Malformed.class);
            assertThat(arrive(control, whole.asSlice(0, 5))).isInstanceOf(FabricControl.Malformed.class);
        }
    }
}
