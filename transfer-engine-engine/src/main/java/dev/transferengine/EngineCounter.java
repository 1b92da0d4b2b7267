package dev.transferengine;

/** Engine-wide counters, read with {@link EngineMetrics#counter(EngineCounter)}. */
public enum EngineCounter {
    REQUESTS_SUBMITTED("requests accepted by submit()"),
    REQUESTS_DONE("requests whose every write completed"),
    REQUESTS_FAILED("requests that failed, timeouts included"),
    REQUESTS_TIMED_OUT("requests that failed because they outlived operationTimeout"),
    SENDS_DONE("two-sided sends acknowledged"),
    SENDS_FAILED("two-sided sends that failed"),
    RECEIVES("two-sided messages delivered to a receive listener"),
    IMM_EVENTS("imm events received, all NICs"),
    IMMS_REFUSED(
            "imm writes refused, or imms dropped, because maxUnexpectedImms distinct unexpected values were credited"),
    BACK_PRESSURE("submissions refused because a worker queue was full"),
    CALLBACK_ERRORS("exceptions thrown by user callbacks (logged and swallowed)"),
    WORKER_ERRORS("unexpected errors caught in a worker duty cycle"),
    WORKER_RESTARTS(
            "workers restarted with fresh NICs after an unrecoverable error (their in-flight operations failed)"),
    COMPLETIONS_UNOBSERVED("ended operations not told to completion observers because the callback thread fell behind");

    private final String description;

    EngineCounter(final String description) {
        this.description = description;
    }

    public String description() {
        return description;
    }
}
