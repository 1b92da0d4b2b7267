package dev.transferengine;

/** Receives imms that no expectation or counter claims. Runs on the callback thread. */
@FunctionalInterface
public interface ImmListener {

    /**
     * Reports one imm that nobody claimed.
     *
     * @param imm the 32-bit imm value as the sender wrote it
     */
    void onImm(int imm);
}
