package dev.transferengine;

import java.time.Duration;

/**
 * A polled imm counter for hot loops: the worker credits each arriving imm, with no callback. {@link #await(long)}
 * takes {@code n} credits and waits until the balance is non-negative, so imms that arrived earlier count.
 */
public interface ImmCounter {

    int imm();

    /** Credits received minus credits taken. */
    long balance();

    /** Takes {@code n} credits and spins (then parks) until they are covered. Blocks; do not call on a reactor thread. */
    void await(long n);

    /**
     * Like {@link #await(long)} with a deadline; on timeout the credits are given back and a
     * {@link TransferTimeoutException} is thrown.
     */
    void await(long n, Duration timeout);
}
