package dev.transferengine.transport.tcp;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code NetworkAddress.describe()} reads the payload {@link TcpAddress} writes: the two layouts stay in step. */
class TcpAddressDescriptionTest {

    @Test
    void describeShowsTheSocketAddressTheDomainEncoded() throws UnknownHostException {
        for (final InetSocketAddress socket : new InetSocketAddress[] {
            new InetSocketAddress(InetAddress.getByAddress(new byte[] {10, 0, 0, 5}), 7400),
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 258),
            new InetSocketAddress(InetAddress.getByName("fe80::1"), 65535)
        }) {
            assertThat(TcpAddress.toNetworkAddress(socket).describe())
                    .isEqualTo("tcp://" + TcpAddress.describe(socket));
        }
    }
}
