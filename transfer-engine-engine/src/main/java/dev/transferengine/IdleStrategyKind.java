package dev.transferengine;

/** How an idle worker waits for work. */
public enum IdleStrategyKind {
    /** Spin, then yield, then park with exponential back-off up to 1 ms (default; friendly to shared cores). */
    BACKOFF,
    /** Spin forever: lowest latency, burns its core; use with a pinned worker. */
    SPIN,
    /** Yield the CPU between duty cycles. */
    YIELD
}
