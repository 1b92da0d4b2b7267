package dev.transferengine;

/**
 * A peer one of our NICs talks to, as seen now.
 *
 * @param state     e.g. {@code CONNECTING}, {@code CONNECTED}, {@code UNREACHABLE}
 * @param lastError the last failure, or empty
 */
public record PeerInfo(int group, int nic, NetAddr address, String state, String lastError) {

    public boolean unreachable() {
        return "UNREACHABLE".equals(state);
    }
}
