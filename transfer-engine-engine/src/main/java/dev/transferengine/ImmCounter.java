package dev.transferengine;

import dev.transferengine.exceptions.ImmAbandonedException;
import dev.transferengine.exceptions.InvalidRequestException;
import dev.transferengine.exceptions.TransferTimeoutException;

import java.time.Duration;

/**
 * A polled imm counter for hot loops: the worker credits each arriving imm, with no callback. {@link #await(long)}
 * takes {@code n} credits and waits until the balance is non-negative, so imms that arrived earlier count.
 */
public interface ImmCounter {

    /**
     * The imm value this counter credits.
     *
     * @return the 32-bit imm value
     */
    int imm();

    /**
     * Credits received minus credits taken. Any thread; does not block.
     *
     * @return the balance; negative while an {@link #await(long)} waits for imms still to arrive
     */
    long balance();

    /**
     * Takes {@code n} credits and spins (then parks) until they are covered. Blocks; do not call on a reactor thread.
     * Allocates nothing.
     *
     * @param n credits to take (>= 0); 0 returns at once
     * @throws IllegalArgumentException if {@code n} is negative
     * @throws InvalidRequestException if the counter is replaced or removed while waiting; the credits are given back
     * @throws ImmAbandonedException if a sender abandoned an operation carrying this imm (a negative acknowledgement)
     *     while the credits were not covered; the credits are given back
     */
    void await(long n);

    /**
     * Like {@link #await(long)} with a deadline; on timeout the credits are given back and a
     * {@link TransferTimeoutException} is thrown.
     *
     * @param n credits to take (>= 0)
     * @param timeout how long to wait for them, measured from the call
     * @throws IllegalArgumentException if {@code n} is negative
     * @throws InvalidRequestException if the counter is replaced or removed while waiting
     * @throws ImmAbandonedException if a sender abandoned an operation carrying this imm while waiting
     * @throws TransferTimeoutException if the credits are not covered within {@code timeout}
     */
    void await(long n, Duration timeout);

    /**
     * Like {@link #await(long, Duration)}, but running out of time is an answer rather than an error: for a caller
     * that waits in slices and checks something else between them. On timeout the credits are given back.
     *
     * @param n credits to take (>= 0)
     * @param timeout how long to wait for them, measured from the call
     * @return true once the credits are covered; false if they were not within {@code timeout}
     * @throws IllegalArgumentException if {@code n} is negative
     * @throws InvalidRequestException if the counter is replaced or removed while waiting
     * @throws ImmAbandonedException if a sender abandoned an operation carrying this imm while waiting
     */
    boolean tryAwait(long n, Duration timeout);
}
