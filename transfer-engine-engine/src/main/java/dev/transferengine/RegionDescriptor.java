package dev.transferengine;

import dev.transferengine.exceptions.MalformedDescriptorException;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.List;

/**
 * The serialisable descriptor of a registered memory region, handed to peers so they can write into it (the paper's
 * {@code RegionDescriptor}): the base address, the length, and one {@link Nic} (address, remote key) per NIC of the group that
 * registered it, and what peers may do with it ({@link RegionAccess}). Round-trips through {@link #toBytes()} and
 * through URL-safe base64 text.
 *
 * @param address the region's base address (a host address or a CUDA device pointer)
 * @param length  the region's length in bytes
 * @param nics    one entry per NIC, in NIC order
 * @param access  what peers may do with the region; the owner's NICs enforce it, and a request it rules out is
 *                refused at submission already
 */
public record RegionDescriptor(long address, long length, List<Nic> nics, RegionAccess access) {

    /** The encoding this release writes: version 2 added the access byte. */
    private static final byte VERSION = 2;
    /** The encoding of earlier releases, without the access byte: read as {@link RegionAccess#READ_WRITE}. */
    private static final byte VERSION_WITHOUT_ACCESS = 1;

    private static final RegionAccess[] ACCESS = RegionAccess.values();

    /**
     * The remote key of the region on one NIC, and that NIC's address.
     *
     * @param address the address of the NIC that registered the region, which a writer connects to
     * @param rkey    the region's remote key on that NIC; a write carrying a stale key is refused
     */
    public record Nic(NetworkAddress address, long rkey) {

        /**
         * The NIC's readable address; the remote key is left out, since with it anyone who reaches the NIC can
         * write into the region, and logs, health pages and exception messages travel further than the key may.
         *
         * @return e.g. {@code tcp://10.0.0.5:7400 (rkey redacted)}
         */
        @Override
        public String toString() {
            return address.describe() + " (rkey redacted)";
        }
    }

    /**
     * Checks the length, NIC count and access and copies the NIC list.
     *
     * @throws IllegalArgumentException if the length is negative, there are not 1 to 4 NICs or the access is null
     */
    public RegionDescriptor {
        if (access == null) {
            throw new IllegalArgumentException("RegionDescriptor access must not be null");
        }
        if (length < 0) {
            throw new IllegalArgumentException("RegionDescriptor length must be >= 0, was " + length);
        }
        if (nics.isEmpty() || nics.size() > 4) {
            throw new IllegalArgumentException("RegionDescriptor needs 1 to 4 NICs, got " + nics.size());
        }
        nics = List.copyOf(nics);
    }

    /**
     * A descriptor of a region peers may read and write ({@link RegionAccess#READ_WRITE}).
     *
     * @param address the region's base address
     * @param length the region's length in bytes
     * @param nics one entry per NIC, in NIC order
     * @throws IllegalArgumentException if the length is negative or there are not 1 to 4 NICs
     */
    public RegionDescriptor(final long address, final long length, final List<Nic> nics) {
        this(address, length, nics, RegionAccess.READ_WRITE);
    }

    /**
     * For people: the base address in hex, the length, each NIC's readable address, never a remote key (see
     * {@link Nic#toString()}), and the access; {@link #toText()} is the form to hand to a peer.
     *
     * @return e.g. {@code RegionDescriptor[address=0x7f3a10000000, length=65536, nics=[tcp://10.0.0.5:7400 (rkey
     *     redacted)], access=READ_WRITE]}
     */
    @Override
    public String toString() {
        return "RegionDescriptor[address=0x" + Long.toHexString(address) + ", length=" + length + ", nics=" + nics
                + ", access=" + access + "]";
    }

    /**
     * How many NICs this region is reachable through.
     *
     * @return the number of NICs, 1..4
     */
    public int nicCount() {
        return nics.size();
    }

    /**
     * One NIC's entry; NIC {@code k} of the writer's group writes through NIC {@code k} of the region's group.
     *
     * @param nic the NIC index, 0 to {@link #nicCount()} - 1
     * @return that NIC's address and remote key
     * @throws IndexOutOfBoundsException if {@code nic} is out of range
     */
    public Nic nic(final int nic) {
        return nics.get(nic);
    }

    /**
     * Encoding (version 2): {@code version(1), address(8), length(8), access(1), nicCount(1)}, then per NIC
     * {@code rkey(8), addressLength(2), address bytes}; little-endian. The access byte is the {@link RegionAccess}
     * ordinal (0 read-write, 1 read-only, 2 write-only). Version 1, written by releases before access rights, lacks
     * the access byte; {@link #fromBytes(byte[])} still reads it, as read-write.
     *
     * @return a new array with the encoding, for {@link #fromBytes(byte[])}
     */
    public byte[] toBytes() {
        int size = 1 + 8 + 8 + 1 + 1;
        final byte[][] addrs = new byte[nics.size()][];
        for (int i = 0; i < addrs.length; i++) {
            addrs[i] = nics.get(i).address().toBytes();
            size += 8 + 2 + addrs[i].length;
        }
        final ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        out.put(VERSION)
                .putLong(address)
                .putLong(length)
                .put(accessCode(access))
                .put((byte) nics.size());
        for (int i = 0; i < addrs.length; i++) {
            out.putLong(nics.get(i).rkey()).putShort((short) addrs[i].length).put(addrs[i]);
        }
        return out.array();
    }

    /**
     * Decodes bytes made by {@link #toBytes()}.
     *
     * @param bytes the encoding, nothing before or after it
     * @return the descriptor
     * @throws MalformedDescriptorException if the bytes are truncated, have trailing bytes, an unknown version or
     *     access code, a NIC count out of 1..4, a negative length or a malformed NIC address
     */
    public static RegionDescriptor fromBytes(final byte[] bytes) {
        final ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        try {
            final byte version = in.get();
            if (version != VERSION && version != VERSION_WITHOUT_ACCESS) {
                throw new MalformedDescriptorException("RegionDescriptor version " + version
                        + " is not supported (this release reads " + VERSION_WITHOUT_ACCESS + " and " + VERSION + ")");
            }
            final long address = in.getLong();
            final long length = in.getLong();
            final RegionAccess access = version == VERSION_WITHOUT_ACCESS ? RegionAccess.READ_WRITE : access(in.get());
            final int count = in.get();
            if (count < 1 || count > 4) {
                throw new MalformedDescriptorException("RegionDescriptor NIC count must be 1..4, got " + count);
            }
            if (length < 0) {
                throw new MalformedDescriptorException("RegionDescriptor length is negative: " + length);
            }
            final Nic[] nics = new Nic[count];
            for (int i = 0; i < count; i++) {
                final long rkey = in.getLong();
                final int addrLength = Short.toUnsignedInt(in.getShort());
                if (addrLength > in.remaining()) {
                    throw new MalformedDescriptorException("RegionDescriptor NIC " + i + " address length " + addrLength
                            + " exceeds the remaining " + in.remaining() + " bytes");
                }
                final byte[] addr = new byte[addrLength];
                in.get(addr);
                nics[i] = new Nic(NetworkAddress.fromBytes(addr), rkey);
            }
            if (in.hasRemaining()) {
                throw new MalformedDescriptorException("RegionDescriptor has " + in.remaining() + " trailing bytes");
            }
            return new RegionDescriptor(address, length, List.of(nics), access);
        } catch (final BufferUnderflowException e) {
            throw new MalformedDescriptorException("RegionDescriptor is truncated (" + bytes.length + " bytes)", e);
        }
    }

    @SuppressWarnings("EnumOrdinal") // the wire code is the ordinal, documented in toBytes; access(byte) decodes it
    private static byte accessCode(final RegionAccess access) {
        return (byte) access.ordinal();
    }

    private static RegionAccess access(final byte code) {
        if (code < 0 || code >= ACCESS.length) {
            throw new MalformedDescriptorException("RegionDescriptor access code " + code
                    + " is unknown (0 read-write, " + "1 read-only, 2 write-only)");
        }
        return ACCESS[code];
    }

    /**
     * The text form, for configuration files, HTTP and logs.
     *
     * @return URL-safe base64 of {@link #toBytes()}, without padding, for {@link #parse(String)}
     */
    public String toText() {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(toBytes());
    }

    /**
     * Decodes the text made by {@link #toText()}; surrounding white space is ignored.
     *
     * @param text URL-safe base64, with or without padding
     * @return the descriptor
     * @throws MalformedDescriptorException if the text is not URL-safe base64 or its bytes are not a descriptor
     */
    public static RegionDescriptor parse(final String text) {
        try {
            return fromBytes(Base64.getUrlDecoder().decode(text.strip()));
        } catch (final IllegalArgumentException e) {
            throw new MalformedDescriptorException(
                    "RegionDescriptor text is not URL-safe base64: " + e.getMessage(), e);
        }
    }
}
