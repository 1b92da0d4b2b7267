package dev.transferengine;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link NetworkAddress#describe()}: readable forms of the shipped transports, hex for anything else. */
class NetworkAddressDescriptionTest {

    @Test
    void tcpAddressReadsAsUrlWithThePortInTheRightByteOrder() {
        // port 7400 = 0x1CE8, little-endian on the wire: E8 1C
        final NetworkAddress address = NetworkAddress.of("tcp", new byte[] {4, (byte) 0xE8, 0x1C, 10, 0, 0, 5});

        assertThat(address.describe()).isEqualTo("tcp://10.0.0.5:7400");
        assertThat(address.toString()).isEqualTo("0103746370" + "04e81c0a000005");
    }

    @Test
    void tcpIpv6AddressIsBracketed() {
        final byte[] payload = new byte[19];
        payload[0] = 6;
        payload[1] = (byte) 0xE8;
        payload[2] = 0x1C;
        payload[18] = 1;

        assertThat(NetworkAddress.of("tcp", payload).describe()).isEqualTo("tcp://[0:0:0:0:0:0:0:1]:7400");
    }

    @Test
    void fabricShmNameReadsAsItsPath() {
        assertThat(fabric("shm", "fi_shm://4711:0\0".getBytes(StandardCharsets.US_ASCII))
                        .describe())
                .isEqualTo("fabric:shm://4711:0");
    }

    @Test
    void fabricSockaddrReadsAsHostAndPortInNetworkOrder() {
        // struct sockaddr_in: family AF_INET (2, host order), port 7400 big-endian, 10.0.0.5, 8 bytes of zero
        final byte[] sockaddr = {2, 0, 0x1C, (byte) 0xE8, 10, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0};

        assertThat(fabric("tcp;ofi_rxm", sockaddr).describe()).isEqualTo("fabric:tcp;ofi_rxm://10.0.0.5:7400");
    }

    @Test
    void opaqueFabricNameAndUnknownTransportFallBackToHex() {
        assertThat(fabric("efa", new byte[] {(byte) 0xFE, (byte) 0x80, 0, 1}).describe())
                .isEqualTo("fabric:efa:fe800001");
        assertThat(NetworkAddress.of("verbs", new byte[] {1, 2}).describe()).isEqualTo("verbs:0102");
    }

    @Test
    void malformedPayloadOfAKnownTransportIsDescribedNotRefused() {
        assertThat(NetworkAddress.of("tcp", new byte[] {9, 1}).describe()).isEqualTo("tcp:0901");
        assertThat(NetworkAddress.of("fabric", new byte[] {40, 1}).describe()).isEqualTo("fabric:2801");
    }

    private static NetworkAddress fabric(final String provider, final byte[] name) {
        final byte[] providerBytes = provider.getBytes(StandardCharsets.US_ASCII);
        final byte[] payload = new byte[1 + providerBytes.length + name.length];
        payload[0] = (byte) providerBytes.length;
        System.arraycopy(providerBytes, 0, payload, 1, providerBytes.length);
        System.arraycopy(name, 0, payload, 1 + providerBytes.length, name.length);
        return NetworkAddress.of("fabric", payload);
    }
}
