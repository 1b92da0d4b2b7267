package dev.transferengine;

/** Per-NIC counters, read with {@link EngineMetrics#counter(int, int, NicCounter)}. */
public enum NicCounter {
    /** Payload bytes of writes and sends this NIC completed, in bytes. */
    BYTES_WRITTEN("payload bytes of writes and sends this NIC completed"),
    /** Payload bytes peers wrote or sent that this NIC placed into local memory, in bytes. */
    BYTES_RECEIVED("payload bytes this NIC placed into local memory"),
    /** Writes (work requests: one per shard, page or target) this NIC completed. */
    WRITES("writes (work requests) this NIC completed"),
    /** Writes this NIC reported failed. */
    WRITE_ERRORS("writes this NIC reported failed"),
    /** Two-sided sends this NIC completed. */
    SENDS("two-sided sends this NIC completed"),
    /** Two-sided messages this NIC received. */
    RECEIVES("two-sided messages this NIC received"),
    /** Imm events this NIC received. */
    IMMS("imm events this NIC received"),
    /** Reads (work requests: one per shard, page or source) this NIC completed. */
    READS("reads (work requests) this NIC completed"),
    /** Payload bytes of reads this NIC completed: bytes pulled from peers into local memory, in bytes. */
    BYTES_READ("payload bytes of reads this NIC completed"),
    /** Reads this NIC reported failed. */
    READ_ERRORS("reads this NIC reported failed");

    private final String description;

    NicCounter(final String description) {
        this.description = description;
    }

    /**
     * A one-line description, for a metrics registry.
     *
     * @return what the counter counts, lower case, stable
     */
    public String description() {
        return description;
    }
}
