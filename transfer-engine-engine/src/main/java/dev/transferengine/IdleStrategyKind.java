package dev.transferengine;

/** How an idle worker waits for work. */
public enum IdleStrategyKind {
    /**
     * Spin for 50 us after the last work, yield until 100 us, then park with exponential back-off up to 50 us
     * (default). A submission or a callback due wakes a parked engine thread at once; the short park bounds how late
     * a parked worker notices what arrives from the network (remote writes that a manual-progress provider lands only
     * when polled). An idle engine thread wakes about 20,000 times a second.
     */
    BACKOFF,
    /** Spin forever: lowest latency, burns its core; use with a pinned worker. */
    SPIN,
    /** Yield the CPU between duty cycles. */
    YIELD
}
