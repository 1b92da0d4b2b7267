package dev.transferengine;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import org.jspecify.annotations.Nullable;

/**
 * Readable forms of the payloads of the transports this engine ships, for {@link NetworkAddress#describe()}. The layouts
 * mirror {@code transport.tcp.TcpAddress} and {@code transport.fabric.FabricAddress} (their tests check that both
 * stay in step); a payload that does not decode is shown as hex rather than refused, since a description never
 * fails.
 */
final class AddressDescriptions {

    private static final HexFormat HEX = HexFormat.of();
    private static final String SHM_SCHEME = "fi_shm://";
    /** {@code struct sockaddr_in} as the libfabric tcp provider names an endpoint: family is host order. */
    private static final int SOCKADDR_IN_LENGTH = 16;

    private static final int SOCKADDR_IN6_LENGTH = 28;
    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;

    private AddressDescriptions() {}

    static String describe(final String transport, final byte[] payload) {
        final @Nullable String decoded =
                switch (transport) {
                    case "tcp" -> tcp(payload);
                    case "fabric" -> fabric(payload);
                    default -> null;
                };
        return decoded != null ? decoded : transport + ":" + HEX.formatHex(payload);
    }

    /** {@code family(1) = 4 or 6, port (uint16 little-endian), address (4 or 16 bytes)}. */
    private static @Nullable String tcp(final byte[] payload) {
        if (payload.length < 3) {
            return null;
        }
        final int ipLength = payload[0] == 4 ? 4 : payload[0] == 6 ? 16 : -1;
        if (payload.length != 3 + ipLength) {
            return null;
        }
        final int port = (payload[1] & 0xFF) | (payload[2] & 0xFF) << 8;
        return "tcp://" + hostAndPort(payload, 3, ipLength, port);
    }

    /** {@code providerLength(1), provider (ASCII), fi_getname bytes}. */
    private static @Nullable String fabric(final byte[] payload) {
        final int providerLength = payload.length == 0 ? 0 : payload[0] & 0xFF;
        if (providerLength == 0 || payload.length < 1 + providerLength) {
            return null;
        }
        final String provider = new String(payload, 1, providerLength, StandardCharsets.US_ASCII);
        final int name = 1 + providerLength;
        final int nameLength = payload.length - name;
        final @Nullable String text = printable(payload, name, nameLength);
        if (text != null && text.startsWith(SHM_SCHEME)) {
            return "fabric:" + provider + "://" + text.substring(SHM_SCHEME.length());
        }
        final @Nullable String socket = sockaddr(payload, name, nameLength);
        if (socket != null) {
            return "fabric:" + provider + "://" + socket;
        }
        return "fabric:" + provider + ":" + (text != null ? text : HEX.formatHex(payload, name, payload.length));
    }

    /** {@code sockaddr_in}/{@code sockaddr_in6}: family in host order (little-endian here), port in network order. */
    private static @Nullable String sockaddr(final byte[] bytes, final int offset, final int length) {
        if (length < 4) {
            return null;
        }
        final int family = (bytes[offset] & 0xFF) | (bytes[offset + 1] & 0xFF) << 8;
        final int port = (bytes[offset + 2] & 0xFF) << 8 | (bytes[offset + 3] & 0xFF);
        if (family == AF_INET && length == SOCKADDR_IN_LENGTH) {
            return hostAndPort(bytes, offset + 4, 4, port);
        }
        if (family == AF_INET6 && length == SOCKADDR_IN6_LENGTH) {
            return hostAndPort(bytes, offset + 8, 16, port);
        }
        return null;
    }

    private static String hostAndPort(final byte[] bytes, final int offset, final int length, final int port) {
        final byte[] ip = new byte[length];
        System.arraycopy(bytes, offset, ip, 0, length);
        try {
            final String host = InetAddress.getByAddress(ip).getHostAddress();
            return (length == 16 ? "[" + host + "]" : host) + ":" + port;
        } catch (final UnknownHostException e) {
            throw new AssertionError("4 and 16 bytes are always an IP address", e);
        }
    }

    /** The bytes as ASCII when every one is printable (a trailing NUL ends the string), or null. */
    private static @Nullable String printable(final byte[] bytes, final int offset, final int length) {
        int end = offset + length;
        while (end > offset && bytes[end - 1] == 0) {
            end--;
        }
        if (end == offset) {
            return null;
        }
        for (int i = offset; i < end; i++) {
            if (bytes[i] < 0x20 || bytes[i] > 0x7E) {
                return null;
            }
        }
        return new String(bytes, offset, end - offset, StandardCharsets.US_ASCII);
    }
}
