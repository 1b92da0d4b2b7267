package dev.transferengine;

/** Engine-wide counters, read with {@link EngineMetrics#counter(EngineCounter)}. */
public enum EngineCounter {
    /**
     * Requests and sends accepted into a worker's queue: by {@code submit()}, {@code trySubmit()} and {@code send()}.
     */
    REQUESTS_SUBMITTED("requests accepted by submit()"),
    /** Requests whose every write completed. */
    REQUESTS_DONE("requests whose every write completed"),
    /** Requests that failed, timeouts included. */
    REQUESTS_FAILED("requests that failed, timeouts included"),
    /**
     * Requests that failed because they outlived {@link EngineConfig#operationTimeout()}; also counted in
     * {@link #REQUESTS_FAILED}.
     */
    REQUESTS_TIMED_OUT("requests that failed because they outlived operationTimeout"),
    /** Two-sided sends the receiver acknowledged. */
    SENDS_DONE("two-sided sends acknowledged"),
    /** Two-sided sends that failed. */
    SENDS_FAILED("two-sided sends that failed"),
    /** Two-sided messages delivered to a {@link ReceiveListener}. */
    RECEIVES("two-sided messages delivered to a receive listener"),
    /** Imm events received, summed over all NICs. */
    IMM_EVENTS("imm events received, all NICs"),
    /**
     * Imm writes refused, or imms dropped, because {@link EngineConfig#maxUnexpectedImms()} distinct unexpected values
     * were already credited.
     */
    IMMS_REFUSED(
            "imm writes refused, or imms dropped, because maxUnexpectedImms distinct unexpected values were credited"),
    /** Submissions refused because a worker's submission queue was full. */
    BACK_PRESSURE("submissions refused because a worker queue was full"),
    /** Exceptions thrown by user callbacks and probes, logged and swallowed. */
    CALLBACK_ERRORS("exceptions thrown by user callbacks (logged and swallowed)"),
    /** Unexpected errors caught in a worker duty cycle; the worker carried on. */
    WORKER_ERRORS("unexpected errors caught in a worker duty cycle"),
    /**
     * Regions whose memory the application freed (closed its arena) while they were registered; the worker
     * deregistered each within a millisecond, so peers' writes to them are refused from then on.
     */
    REGIONS_FREED("regions freed while registered, then deregistered by the worker"),
    /** Workers restarted with fresh NICs after an unrecoverable error; their in-flight operations failed. */
    WORKER_RESTARTS(
            "workers restarted with fresh NICs after an unrecoverable error (their in-flight operations failed)"),
    /** Ended operations not told to {@link CompletionObserver}s because the callback thread fell behind. */
    COMPLETIONS_UNOBSERVED("ended operations not told to completion observers because the callback thread fell behind"),
    /** Negative acknowledgements sent: operations carrying an imm that failed here, told to their receivers. */
    IMMS_ABANDONED_SENT("negative acknowledgements sent: failed operations with an imm, told to their receivers"),
    /** Negative acknowledgements received: imm expectations ended because a sender gave up an operation. */
    IMMS_ABANDONED("negative acknowledgements received: imm expectations ended because a sender abandoned them"),
    /**
     * Imms dropped because nobody claimed them within {@link EngineConfig#unexpectedImmTtl()} (no expectation, no
     * counter, no imm listener); their places in {@link EngineConfig#maxUnexpectedImms()} are free again.
     */
    IMMS_EXPIRED("imms dropped because nobody claimed them within unexpectedImmTtl");

    private final String description;

    EngineCounter(final String description) {
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
