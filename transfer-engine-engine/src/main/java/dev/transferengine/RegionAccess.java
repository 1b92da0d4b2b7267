package dev.transferengine;

/**
 * What peers may do with a registered region, fixed at registration and carried in its {@link RegionDescriptor}.
 * The owner's NICs enforce it (the tcp transport checks every request; the fabric transport registers the memory with
 * only the matching remote access flags and checks too), and a request whose descriptor already says the access is
 * not allowed is refused at submission. A refusal is a {@link dev.transferengine.exceptions.RemoteAccessException}
 * with reason {@code NOT_WRITABLE} or {@code NOT_READABLE}; the memory stays untouched. The owner's own use of the
 * region (as the source of its writes, or the destination of its reads) is not limited by it.
 */
public enum RegionAccess {
    /** Peers may write into the region and read from it: the default. */
    READ_WRITE,
    /** Peers may only read from the region (pull); writes are refused. A read-only segment may be registered so. */
    READ_ONLY,
    /** Peers may only write into the region (push); reads are refused. */
    WRITE_ONLY;

    /**
     * Whether peers may read from a region registered so.
     *
     * @return true for {@link #READ_WRITE} and {@link #READ_ONLY}
     */
    public boolean allowsRemoteRead() {
        return this != WRITE_ONLY;
    }

    /**
     * Whether peers may write into a region registered so.
     *
     * @return true for {@link #READ_WRITE} and {@link #WRITE_ONLY}
     */
    public boolean allowsRemoteWrite() {
        return this != READ_ONLY;
    }
}
