package dev.transferengine;

/** Receives imms that no expectation or counter claims. Runs on the callback thread. */
@FunctionalInterface
public interface ImmListener {

    void onImm(int imm);
}
