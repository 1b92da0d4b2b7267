package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.MalformedDescriptorException;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The {@link NetworkAddress} of a fabric endpoint: transport {@code fabric}, payload
 * {@code providerNameLength(1), providerName (ASCII, as libfabric names it), fi_getname bytes}. Naming the provider
 * lets a domain refuse an address from another provider before handing foreign bytes to fi_av_insert.
 */
final class FabricAddress {

    static final String TRANSPORT = "fabric";

    private FabricAddress() {}

    static NetworkAddress of(final String provider, final byte[] name) {
        final byte[] providerBytes = provider.getBytes(StandardCharsets.US_ASCII);
        final byte[] payload = new byte[1 + providerBytes.length + name.length];
        payload[0] = (byte) providerBytes.length;
        System.arraycopy(providerBytes, 0, payload, 1, providerBytes.length);
        System.arraycopy(name, 0, payload, 1 + providerBytes.length, name.length);
        return NetworkAddress.of(TRANSPORT, payload);
    }

    /**
     * The endpoint name inside {@code address}, checked to belong to {@code provider}.
     *
     * @throws MalformedDescriptorException if it is not a fabric address of that provider
     */
    static byte[] endpointName(final NetworkAddress address, final String provider) {
        if (!TRANSPORT.equals(address.transport())) {
            throw new MalformedDescriptorException("address " + address + " belongs to transport '"
                    + address.transport() + "', not '" + TRANSPORT + "'");
        }
        final byte[] payload = address.payload();
        final int nameLength = payload.length == 0 ? 0 : payload[0] & 0xFF;
        if (payload.length < 2 + nameLength || nameLength == 0) {
            throw new MalformedDescriptorException(
                    "fabric address " + address + " is truncated (" + payload.length + " payload bytes)");
        }
        final String owner = new String(payload, 1, nameLength, StandardCharsets.US_ASCII);
        if (!owner.equals(provider)) {
            throw new MalformedDescriptorException("fabric address " + address + " belongs to provider '" + owner
                    + "', but this domain runs provider '" + provider + "'");
        }
        return Arrays.copyOfRange(payload, 1 + nameLength, payload.length);
    }
}
