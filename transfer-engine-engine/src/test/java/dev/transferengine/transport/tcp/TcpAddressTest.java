package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.MalformedDescriptorException;
import dev.transferengine.spi.RecordingDomainListener;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TcpAddressTest {

    @Test
    void ipv4AddressRoundTripsThroughBytesAndText() {
        final InetSocketAddress socket = new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 40123);
        final NetworkAddress address = TcpAddress.toNetworkAddress(socket);

        assertThat(address.transport()).isEqualTo("tcp");
        assertThat(TcpAddress.toSocketAddress(NetworkAddress.fromBytes(address.toBytes())))
                .isEqualTo(socket);
        assertThat(TcpAddress.toSocketAddress(NetworkAddress.parse(address.toString())))
                .isEqualTo(socket);
        assertThat(TcpAddress.describe(socket)).isEqualTo("127.0.0.1:40123");
    }

    @Test
    void ipv6AddressRoundTrips() throws UnknownHostException {
        final InetSocketAddress socket = new InetSocketAddress(InetAddress.ofLiteral("::1"), 65535);
        final NetworkAddress address = TcpAddress.toNetworkAddress(socket);

        assertThat(address.payloadLength()).isEqualTo(19);
        assertThat(TcpAddress.toSocketAddress(address)).isEqualTo(socket);
        assertThat(TcpAddress.describe(socket)).isEqualTo("[0:0:0:0:0:0:0:1]:65535");
    }

    @Test
    void domainAdvertisesItsBoundAddressAndPort() {
        try (TcpDomain domain = TcpDomains.open(new RecordingDomainListener())) {
            assertThat(TcpAddress.toSocketAddress(domain.address()))
                    .isEqualTo(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), TcpDomains.port(domain)));
            assertThat(domain.description())
                    .isEqualTo(
                            "tcp 127.0.0.1:" + TcpDomains.port(domain) + " (device memory: staged through pinned host"
                                    + " memory, 4 x 4194304 B chunks per direction (device.memory=cuda))");
        }
    }

    @Test
    void addressesOfOtherTransportsOrWithBadPayloadsAreRefused() {
        try (TcpDomain domain = TcpDomains.open(new RecordingDomainListener())) {
            assertThatThrownBy(() -> domain.resolve(NetworkAddress.of("fabric", new byte[] {4, 1, 0, 127, 0, 0, 1})))
                    .isInstanceOf(MalformedDescriptorException.class)
                    .hasMessageContaining("'fabric'");
            assertThatThrownBy(() -> domain.resolve(NetworkAddress.of("tcp", new byte[0])))
                    .isInstanceOf(MalformedDescriptorException.class)
                    .hasMessageContaining("empty");
            assertThatThrownBy(() -> domain.resolve(NetworkAddress.of("tcp", new byte[] {5, 1, 0, 127, 0, 0, 1})))
                    .isInstanceOf(MalformedDescriptorException.class)
                    .hasMessageContaining("family 5");
            assertThatThrownBy(() -> domain.resolve(NetworkAddress.of("tcp", new byte[] {4, 1, 0, 127, 0, 0})))
                    .isInstanceOf(MalformedDescriptorException.class)
                    .hasMessageContaining("needs 7");
            assertThatThrownBy(() -> domain.resolve(NetworkAddress.of("tcp", new byte[] {6, 1, 0, 127, 0, 0, 1})))
                    .isInstanceOf(MalformedDescriptorException.class)
                    .hasMessageContaining("needs 19");
            assertThatThrownBy(() -> domain.resolve(NetworkAddress.of("tcp", new byte[] {4, 0, 0, 127, 0, 0, 1})))
                    .isInstanceOf(MalformedDescriptorException.class)
                    .hasMessageContaining("port 0");
            assertThat(domain.peers()).isEmpty();
        }
    }
}
