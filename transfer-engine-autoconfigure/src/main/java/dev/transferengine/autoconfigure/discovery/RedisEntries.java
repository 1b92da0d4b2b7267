package dev.transferengine.autoconfigure.discovery;

import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionDescriptor;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The text of an engine's Redis entry, one item a line: {@code generation 17} (written by the publish script),
 * {@code te-registry 1}, {@code address <NetworkAddress text>}, then {@code region <RegionDescriptor text> <name>}
 * for each region. Plain text, so that {@code redis-cli GET} shows what an engine published.
 */
final class RedisEntries {

    private static final String FORMAT = "te-registry 1";

    private RedisEntries() {}

    /** The entry without its generation line, which the publish script puts first. */
    static String body(final NetworkAddress mainAddress, final Map<String, RegionDescriptor> regions) {
        final StringBuilder body =
                new StringBuilder(FORMAT).append("\naddress ").append(mainAddress);
        regions.forEach((name, descriptor) ->
                body.append("\nregion ").append(descriptor.toText()).append(' ').append(name));
        return body.toString();
    }

    /**
     * Reads an entry.
     *
     * @throws IllegalStateException naming the key and the line, if the entry is not one this format wrote
     */
    static RegisteredEngine parse(final String engineName, final String key, final String entry) {
        long generation = -1;
        NetworkAddress address = null;
        final Map<String, RegionDescriptor> regions = new LinkedHashMap<>();
        boolean format = false;
        for (final String line : entry.split("\n", -1)) {
            try {
                if (line.startsWith("generation ")) {
                    generation = Long.parseLong(line.substring("generation ".length()));
                } else if (line.equals(FORMAT)) {
                    format = true;
                } else if (line.startsWith("address ")) {
                    address = NetworkAddress.parse(line.substring("address ".length()));
                } else if (line.startsWith("region ")) {
                    final int space = line.indexOf(' ', "region ".length());
                    if (space < 0) {
                        throw malformed(key, line, null);
                    }
                    regions.put(
                            line.substring(space + 1),
                            RegionDescriptor.parse(line.substring("region ".length(), space)));
                } else {
                    throw malformed(key, line, null);
                }
            } catch (final IllegalArgumentException e) {
                throw malformed(key, line, e);
            }
        }
        if (!format || generation < 0 || address == null) {
            throw new IllegalStateException(
                    "the registry entry '" + key + "' is not a " + FORMAT + " entry with a generation and an address");
        }
        return new RegisteredEngine(engineName, generation, address, regions);
    }

    private static IllegalStateException malformed(
            final String key, final String line, final @org.jspecify.annotations.Nullable Exception cause) {
        final String shown = line.length() > 40 ? line.substring(0, 40) + "..." : line;
        return new IllegalStateException(
                "the registry entry '" + key + "' has a line this engine cannot read: '" + shown + "'", cause);
    }
}
