package dev.transferengine.bench;

import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionDescriptor;

/**
 * The one line {@code te-bench serve} prints once it is ready: its main address and the descriptor of its region,
 * in their text forms: {@code te-peer <NetworkAddress> <RegionDescriptor>}.
 *
 * @param address the peer engine's main address, where the imm round trip sends its hello
 * @param region  the peer's registered region, the destination of every write
 */
record PeerLine(NetworkAddress address, RegionDescriptor region) {

    static final String PREFIX = "te-peer";

    /** Whether {@code line} is a peer line (servers may print other lines first). */
    static boolean matches(final String line) {
        return line.startsWith(PREFIX + " ");
    }

    static PeerLine parse(final String line) {
        final String[] parts = line.strip().split("\\s+", -1);
        if (parts.length != 3 || !parts[0].equals(PREFIX)) {
            throw new IllegalArgumentException(
                    "not a peer line ('" + PREFIX + " <address> <descriptor>'): '" + line + "'");
        }
        return new PeerLine(NetworkAddress.parse(parts[1]), RegionDescriptor.parse(parts[2]));
    }

    String format() {
        return PREFIX + " " + address + " " + region.toText();
    }
}
