package dev.transferengine.transport.tcp;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.MalformedDescriptorException;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * The tcp transport's {@link NetworkAddress} payload: one NIC's IP address and listening port.
 *
 * <pre>
 *  +--------+-----------------+-------------------------------+
 *  | family | port (uint16 LE)| address: 4 bytes (v4) or 16 (v6)|
 *  | 4 or 6 |                 |                               |
 *  +--------+-----------------+-------------------------------+
 * </pre>
 *
 * Decoding never touches DNS: the address bytes are taken as they are.
 */
final class TcpAddress {

    private static final byte FAMILY_V4 = 4;
    private static final byte FAMILY_V6 = 6;

    private TcpAddress() {}

    /** Encodes a bound socket address. */
    static NetworkAddress toNetworkAddress(final InetSocketAddress socketAddress) {
        final byte[] ip = socketAddress.getAddress().getAddress();
        final byte[] payload = new byte[3 + ip.length];
        payload[0] = ip.length == 4 ? FAMILY_V4 : FAMILY_V6;
        payload[1] = (byte) socketAddress.getPort();
        payload[2] = (byte) (socketAddress.getPort() >>> 8);
        System.arraycopy(ip, 0, payload, 3, ip.length);
        return NetworkAddress.of(TcpTransport.NAME, payload);
    }

    /**
     * Decodes an address made by {@link #toNetworkAddress(InetSocketAddress)}.
     *
     * @throws MalformedDescriptorException if it belongs to another transport or its payload is not as above
     */
    static InetSocketAddress toSocketAddress(final NetworkAddress address) {
        if (!TcpTransport.NAME.equals(address.transport())) {
            throw new MalformedDescriptorException(
                    "tcp transport cannot reach a '" + address.transport() + "' address: " + address);
        }
        final int length = address.payloadLength();
        if (length < 1) {
            throw new MalformedDescriptorException("tcp address has an empty payload: " + address);
        }
        final byte family = address.payloadByte(0);
        final int ipLength =
                switch (family) {
                    case FAMILY_V4 -> 4;
                    case FAMILY_V6 -> 16;
                    default ->
                        throw new MalformedDescriptorException(
                                "tcp address family " + family + " is neither 4 nor 6: " + address);
                };
        if (length != 3 + ipLength) {
            throw new MalformedDescriptorException("tcp address of family " + family + " needs " + (3 + ipLength)
                    + " payload bytes, got " + length + ": " + address);
        }
        final int port = (address.payloadByte(1) & 0xFF) | (address.payloadByte(2) & 0xFF) << 8;
        if (port == 0) {
            throw new MalformedDescriptorException("tcp address has port 0: " + address);
        }
        final byte[] ip = new byte[ipLength];
        for (int i = 0; i < ipLength; i++) {
            ip[i] = address.payloadByte(3 + i);
        }
        try {
            return new InetSocketAddress(InetAddress.getByAddress(ip), port);
        } catch (final UnknownHostException e) {
            throw new MalformedDescriptorException("tcp address bytes are not an IP address: " + address, e);
        }
    }

    /** {@code host:port} (IPv6 in brackets) for messages. */
    static String describe(final InetSocketAddress socketAddress) {
        final InetAddress inet = socketAddress.getAddress();
        final String host = inet.getHostAddress();
        return (inet instanceof Inet6Address ? "[" + host + "]" : host) + ":" + socketAddress.getPort();
    }
}
