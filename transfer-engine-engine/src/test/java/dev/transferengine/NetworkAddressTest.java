package dev.transferengine;

import dev.transferengine.exceptions.MalformedDescriptorException;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NetworkAddressTest {

    @Test
    void roundTripsThroughBytesAndText() {
        final NetworkAddress address = NetworkAddress.of("tcp", new byte[] {4, 127, 0, 0, 1, 0x1F, (byte) 0x90});
        assertThat(NetworkAddress.fromBytes(address.toBytes())).isEqualTo(address);
        assertThat(NetworkAddress.parse(address.toString())).isEqualTo(address).hasSameHashCodeAs(address);
        assertThat(address.transport()).isEqualTo("tcp");
        assertThat(address.payloadLength()).isEqualTo(7);
    }

    @Test
    void payloadIsCopiedSoTheAddressStaysImmutable() {
        final byte[] payload = {1, 2, 3};
        final NetworkAddress address = NetworkAddress.of("fabric", payload);
        payload[0] = 9;
        address.payload()[1] = 9;
        assertThat(address.payload()).containsExactly(1, 2, 3);
    }

    @Test
    void malformedBytesAreRefusedWithTheReason() {
        assertThatThrownBy(() -> NetworkAddress.fromBytes(new byte[] {1}))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("at least 3 bytes");
        assertThatThrownBy(() -> NetworkAddress.fromBytes(new byte[] {2, 3, 't', 'c', 'p'}))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("version 2");
        assertThatThrownBy(() -> NetworkAddress.fromBytes(new byte[] {1, 9, 't', 'c', 'p'}))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("name length 9");
        assertThatThrownBy(() -> NetworkAddress.fromBytes(new byte[] {1, 2, 0, 1, 5}))
                .isInstanceOf(MalformedDescriptorException.class)
                .hasMessageContaining("non-printable");
        assertThatThrownBy(() -> NetworkAddress.parse("not hex")).isInstanceOf(MalformedDescriptorException.class);
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
                NetworkAddress.fromBytes(bytes);
            } catch (final MalformedDescriptorException expected) {
                // the only allowed failure
            }
        }
    }
}
