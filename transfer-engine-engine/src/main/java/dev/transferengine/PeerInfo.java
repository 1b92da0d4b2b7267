package dev.transferengine;

/**
 * A peer one of our NICs talks to, as seen now: a snapshot, not updated later.
 *
 * @param group     the index of the group of our NIC
 * @param nic       the index of our NIC within its group
 * @param address   the peer NIC's address
 * @param state     where our NIC stands with the peer
 * @param lastError the last failure, or empty
 */
public record PeerInfo(int group, int nic, NetworkAddress address, PeerState state, String lastError) {

    /**
     * Whether our NIC had given up on this peer when the snapshot was taken.
     *
     * @return {@code true} when {@link #state()} is {@link PeerState#UNREACHABLE}
     */
    public boolean unreachable() {
        return state == PeerState.UNREACHABLE;
    }
}
