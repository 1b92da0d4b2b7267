package dev.transferengine;

import dev.transferengine.exceptions.ImmAbandonedException;

/** Called on the callback thread when an expected imm count is reached. */
@FunctionalInterface
public interface ImmCountListener {

    /**
     * Reports that the expected count of {@code imm} was reached.
     *
     * @param imm the imm value whose count was reached
     * @return true to stay armed for the next {@code count} imms; false to remove the expectation, after which the
     *         imms that arrived meanwhile are replayed to the {@link ImmListener} (or credited)
     */
    boolean onReached(int imm);

    /**
     * Reports a negative acknowledgement: a peer's operation carrying {@code imm} failed at the sender, so the
     * expected count may never be reached. The expectation has been removed when this runs (the imms counted so far
     * stay credited, for a retry). Callback thread. The default does nothing.
     *
     * @param abandoned names the sending peer, the imm, how many events will not come and the sender's failure
     */
    default void onAbandoned(final ImmAbandonedException abandoned) {
        // an expectation without a failure path simply ends; the credits stay
    }
}
