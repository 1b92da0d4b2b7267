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
            final FabricControl control = new FabricControl(arena, FabricControl.MESSAGE_BYTES);
            assertThat(arrive(control, FabricControl.poolQuery(SELF, 42)))
                    .isEqualTo(new FabricControl.PoolQuery(SELF, 42));
            final FabricControl.Received sizes =
                    arrive(control, FabricControl.poolSizes(SELF, new int[] {100, 100, 600, 3000}, 7, 42));
            assertThat(sizes).isInstanceOf(FabricControl.PoolSizes.class);
            assertThat(((FabricControl.PoolSizes) sizes).peer()).isEqualTo(SELF);
            assertThat(((FabricControl.PoolSizes) sizes).sizes()).containsExactly(100, 100, 600, 3000);
            assertThat(((FabricControl.PoolSizes) sizes).version()).isEqualTo(7);
            assertThat(((FabricControl.PoolSizes) sizes).nonce()).isEqualTo(42);
            assertThat(((FabricControl.PoolSizes) sizes).nonced()).isTrue();
        }
    }

    /**
     * An engine before the sizes' version sends none: its sizes arrive with version -1; one before echoed nonces sends
     * no nonce, and the domain refuses its answers (its sends then go by their length).
     */
    @Test
    void anAnswerWithoutAVersionOrANonceArrivesSaying() {
        try (Arena arena = Arena.ofConfined()) {
            final FabricControl control = new FabricControl(arena, FabricControl.MESSAGE_BYTES);
            final MemorySegment whole = FabricControl.poolSizes(SELF, new int[] {100, 3000}, 7, 42);
            final FabricControl.Received unversioned = arrive(control, whole.asSlice(0, whole.byteSize() - 16));
            assertThat(((FabricControl.PoolSizes) unversioned).sizes()).containsExactly(100, 3000);
            assertThat(((FabricControl.PoolSizes) unversioned).version()).isEqualTo(-1);
            assertThat(((FabricControl.PoolSizes) unversioned).nonced()).isFalse();
            final FabricControl.Received unnonced = arrive(control, whole.asSlice(0, whole.byteSize() - 8));
            assertThat(((FabricControl.PoolSizes) unnonced).version()).isEqualTo(7);
            assertThat(((FabricControl.PoolSizes) unnonced).nonced()).isFalse();
        }
    }

    @Test
    void anAnswerCutShortIsDroppedAsMalformed() {
        try (Arena arena = Arena.ofConfined()) {
            final FabricControl control = new FabricControl(arena, FabricControl.MESSAGE_BYTES);
            final MemorySegment whole = FabricControl.poolSizes(SELF, new int[] {100, 3000}, 1, 42);
            assertThat(arrive(control, whole.asSlice(0, whole.byteSize() - 18)))
                    .isInstanceOf(FabricControl.Refused.class);
            assertThat(arrive(control, whole.asSlice(0, 5))).isInstanceOf(FabricControl.Refused.class);
        }
    }
}
