package dev.transferengine;

/** Per-NIC counters, read with {@link EngineMetrics#counter(int, int, NicCounter)}. */
public enum NicCounter {
    BYTES_WRITTEN("payload bytes of writes and sends this NIC completed"),
    BYTES_RECEIVED("payload bytes this NIC placed into local memory"),
    WRITES("writes (work requests) this NIC completed"),
    WRITE_ERRORS("writes this NIC reported failed"),
    SENDS("two-sided sends this NIC completed"),
    RECEIVES("two-sided messages this NIC received"),
    IMMS("imm events this NIC received");

    private final String description;

    NicCounter(final String description) {
        this.description = description;
    }

    public String description() {
        return description;
    }
}
