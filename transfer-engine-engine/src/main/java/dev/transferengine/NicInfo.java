package dev.transferengine;

/**
 * One NIC (domain) of a group, as seen now.
 *
 * @param failure why the NIC failed, or empty while it is healthy
 */
public record NicInfo(int group, int nic, NetAddr address, String description, String failure) {

    public boolean healthy() {
        return failure.isEmpty();
    }
}
