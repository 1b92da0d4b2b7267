package dev.transferengine;

/**
 * One NIC (domain) of a group, as seen now: a snapshot, not updated later.
 *
 * @param group the group's index in {@link EngineConfig#groups()}
 * @param nic the NIC's index within its group
 * @param address the NIC's address, as peers see it
 * @param description a human description from the transport, e.g. {@code tcp 127.0.0.1:40123 (device memory:
 *     staged through pinned host memory, ...)}: it ends with the path device memory takes on this NIC (FI_HMEM
 *     GPUDirect on fabric, staging through pinned host memory on tcp) or, where it is refused, why
 * @param failure why the NIC (or its whole group) failed, or empty while it is healthy
 */
public record NicInfo(int group, int nic, NetworkAddress address, String description, String failure) {

    /**
     * Whether the NIC was working when the snapshot was taken.
     *
     * @return {@code true} when {@link #failure()} is empty
     */
    public boolean healthy() {
        return failure.isEmpty();
    }
}
