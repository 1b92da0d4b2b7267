package dev.transferengine;

/**
 * A request the engine submits by itself each time a number of imms of one value landed, from the worker that
 * counted the last of them: no callback thread and no caller thread in between, so a reply (an ack, a credit return,
 * a relay) leaves as soon as the imms that call for it are counted. Made by
 * {@link TransferEngine#triggerOnImm(int, int, TransferRequest, TransferListener)}; it is the imm's entry in the
 * engine's imm counting, as an expectation or a polled counter would be.
 */
public interface ImmTrigger extends AutoCloseable {

    /**
     * The imm value this trigger counts.
     *
     * @return the 32-bit imm value
     */
    int imm();

    /**
     * How many imms make it fire once.
     *
     * @return the count it was armed with, at least 1
     */
    int count();

    /**
     * How many times it fired, each firing one submission of its request (whose outcome, success or a typed failure
     * such as back-pressure, goes to the trigger's listener or counters). Any thread; does not block.
     *
     * @return the submissions it made so far
     */
    long fired();

    /**
     * Disarms the trigger if it is still its imm's entry (a later expectation, counter or trigger for the imm is left
     * alone). Imms counted toward its next firing stay credited to the imm, for whoever counts it next (or go to the
     * imm listener, if one is set). Submissions it made already run on. Any thread; takes a short lock; idempotent;
     * works on a closed engine too.
     */
    @Override
    void close();
}
