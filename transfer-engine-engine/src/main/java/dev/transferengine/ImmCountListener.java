package dev.transferengine;

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
}
