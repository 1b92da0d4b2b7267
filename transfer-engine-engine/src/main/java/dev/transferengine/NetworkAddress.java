package dev.transferengine;

import dev.transferengine.exceptions.MalformedDescriptorException;

import java.io.Serial;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * The opaque, serialisable address of one NIC (a domain). It names its transport and carries that transport's
 * address bytes. It round-trips through {@link #toBytes()} / {@link #fromBytes(byte[])} and through its text form
 * {@link #toString()} / {@link #parse(String)} (lower-case hex of the bytes). For people (logs, health, endpoints)
 * {@link #describe()} decodes the known transports' forms, e.g. {@code tcp://10.0.0.5:7400}.
 *
 * <p>Layout: {@code version(1) = 1, transportNameLength(1), transportName(ASCII), payload}.
 */
public final class NetworkAddress implements Serializable {

    // Serializable so that PeerUnreachableException, which carries one, is serializable as every Throwable is.
    @Serial
    private static final long serialVersionUID = 1L;

    private static final byte VERSION = 1;
    private static final HexFormat HEX = HexFormat.of();

    /** The transport's name, 1..32 ASCII characters. */
    private final String transport;

    /** The transport's own address bytes; never handed out without a copy. */
    private final byte[] payload;

    /** The hash code, computed once: addresses are map keys on the worker. */
    private final int hash;

    private NetworkAddress(final String transport, final byte[] payload) {
        this.transport = transport;
        this.payload = payload;
        this.hash = 31 * transport.hashCode() + Arrays.hashCode(payload);
    }

    /**
     * An address of {@code transport} with the transport's own {@code payload} bytes (copied).
     *
     * @param transport the transport's name, 1..32 ASCII characters, e.g. {@code tcp}
     * @param payload the transport's address bytes, in the transport's own layout
     * @return the address
     * @throws IllegalArgumentException if the name is empty, longer than 32 characters or not ASCII
     */
    public static NetworkAddress of(final String transport, final byte[] payload) {
        if (transport.isEmpty()
                || transport.length() > 32
                || !StandardCharsets.US_ASCII.newEncoder().canEncode(transport)) {
            throw new IllegalArgumentException("transport name must be 1..32 ASCII characters: '" + transport + "'");
        }
        return new NetworkAddress(transport, payload.clone());
    }

    /**
     * Decodes bytes made by {@link #toBytes()}.
     *
     * @param bytes the encoding, nothing before or after it; the payload is everything after the name
     * @return the address
     * @throws MalformedDescriptorException if the bytes are too short, have an unknown version or a bad transport name
     */
    public static NetworkAddress fromBytes(final byte[] bytes) {
        if (bytes.length < 3) {
            throw new MalformedDescriptorException("NetworkAddress needs at least 3 bytes, got " + bytes.length);
        }
        if (bytes[0] != VERSION) {
            throw new MalformedDescriptorException(
                    "NetworkAddress version " + bytes[0] + " is not supported (expected " + VERSION + ")");
        }
        final int nameLength = bytes[1] & 0xFF;
        if (nameLength == 0 || nameLength > 32 || 2 + nameLength > bytes.length) {
            throw new MalformedDescriptorException("NetworkAddress transport name length " + nameLength
                    + " does not fit in " + bytes.length + " bytes");
        }
        for (int i = 2; i < 2 + nameLength; i++) {
            if (bytes[i] < 0x21 || bytes[i] > 0x7E) {
                throw new MalformedDescriptorException(
                        "NetworkAddress transport name has a non-printable byte at " + i);
            }
        }
        final String transport = new String(bytes, 2, nameLength, StandardCharsets.US_ASCII);
        return new NetworkAddress(transport, Arrays.copyOfRange(bytes, 2 + nameLength, bytes.length));
    }

    /**
     * Parses the text form made by {@link #toString()}; surrounding white space is ignored.
     *
     * @param text hex of {@link #toBytes()}, upper or lower case
     * @return the address
     * @throws MalformedDescriptorException if the text is not hex or its bytes are not an address
     */
    public static NetworkAddress parse(final String text) {
        try {
            return fromBytes(HEX.parseHex(text.strip()));
        } catch (final IllegalArgumentException e) {
            throw new MalformedDescriptorException("NetworkAddress text is not hex: '" + text + "'", e);
        }
    }

    /**
     * The encoding that travels inside an {@link RegionDescriptor}.
     *
     * @return a new array, for {@link #fromBytes(byte[])}
     */
    public byte[] toBytes() {
        final byte[] name = transport.getBytes(StandardCharsets.US_ASCII);
        final byte[] out = new byte[2 + name.length + payload.length];
        out[0] = VERSION;
        out[1] = (byte) name.length;
        System.arraycopy(name, 0, out, 2, name.length);
        System.arraycopy(payload, 0, out, 2 + name.length, payload.length);
        return out;
    }

    /**
     * The transport this address belongs to.
     *
     * @return the transport's name, e.g. {@code tcp} or {@code fabric}
     */
    public String transport() {
        return transport;
    }

    /**
     * The transport's own address bytes. Allocates a copy on each call; use {@link #payloadByte(int)} where that
     * matters.
     *
     * @return a copy of the payload
     */
    public byte[] payload() {
        return payload.clone();
    }

    /**
     * The length of the payload; does not copy it.
     *
     * @return the number of transport payload bytes
     */
    public int payloadLength() {
        return payload.length;
    }

    /**
     * One payload byte; does not copy the payload.
     *
     * @param index the byte's position, 0 to {@link #payloadLength()} - 1
     * @return the byte
     * @throws ArrayIndexOutOfBoundsException if {@code index} is out of range
     */
    public byte payloadByte(final int index) {
        return payload[index];
    }

    /**
     * The address as a person reads it: {@code tcp://10.0.0.5:7400}, {@code tcp://[::1]:7400},
     * {@code fabric:shm://4711:0}, {@code fabric:tcp;ofi_rxm://10.0.0.5:7400}; a form this engine cannot decode shows
     * its transport and payload hex, e.g. {@code fabric:efa:fe80...}. Not parseable: {@link #toString()} is the text
     * form that travels. Allocates; meant for logs and reports, not for the hot path.
     *
     * @return the readable form; never fails, whatever the payload
     */
    public String describe() {
        return AddressDescriptions.describe(transport, payload);
    }

    @Override
    public boolean equals(final Object o) {
        return o instanceof NetworkAddress other
                && hash == other.hash
                && transport.equals(other.transport)
                && Arrays.equals(payload, other.payload);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return HEX.formatHex(toBytes());
    }
}
