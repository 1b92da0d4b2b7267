package dev.transferengine;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NetAddrTest {

    @Test
    void roundTripsThroughBytesAndText() {
        final NetAddr address = NetAddr.of("tcp", new byte[] {4, 127, 0, 0, 1, 0x1F, (byte) 0x90});
        assertThat(NetAddr.fromBytes(address.toBytes())).isEqualTo(address);
        assertThat(NetAddr.parse(address.toString())).isEqualTo(address).hasSameHashCodeAs(address);
        assertThat(address.transport()).isEqualTo("tcp");
        assertThat(address.payloadLength()).isEqualTo(7);
    }

    @Test
    void payloadIsCopiedSoTheAddressStaysImmutable() {
        final byte[] payload = {1, 2, 3};
        final NetAddr address = NetAddr.of("fabric", payload);
        payload[0] = 9;
        address.payload()[1] = 9;
        assertThat(address.payload()).containsExactly(1, 2, 3);
    }

    @Test
    void malformedBytesAreRefusedWithTheReason() {
        assertThatThrownBy(() -> NetAddr.fromBytes(new byte[] {1}))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("at least 3 bytes");
        assertThatThrownBy(() -> NetAddr.fromBytes(new byte[] {2, 3, 't', 'c', 'p'}))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("version 2");
        assertThatThrownBy(() -> NetAddr.fromBytes(new byte[] {1, 9, 't', 'c', 'p'}))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("name length 9");
        assertThatThrownBy(() -> NetAddr.fromBytes(new byte[] {1, 2, 0, 1, 5}))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("non-printable");
        assertThatThrownBy(() -> NetAddr.parse("not hex")).isInstanceOf(MalformedDescriptorException.class);
    }

    @Test
    void randomBytesNeverEscapeAsAnythingButMalformedDescriptor() {
        final SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 20_000; i++) {
            final byte[] bytes = new byte[random.nextInt(0, 40)];
            for (int b = 0; b < bytes.length; b++) {
                bytes[b] = (byte) random.nextInt();
            }
            if (random.nextBoolean() && bytes.length > 1) {
                bytes[0] = 1;
            }
            try {
                NetAddr.fromBytes(bytes);
            } catch (final MalformedDescriptorException expected) {
                // the only allowed failure
            }
        }
    }
}
