package dev.transferengine.reactive;

import java.time.Duration;

/**
 * Settings of a {@link ReactiveTransferEngine}.
 *
 * @param immTimeout        how long {@link ReactiveTransferEngine#expectImm(int, int)} waits before it fails with a
 *                          {@link dev.transferengine.exceptions.TransferTimeoutException}
 * @param receiveBufferSize size in bytes of each receive buffer; longer messages cannot be received
 * @param receivePoolSize   receive buffers each {@link ReactiveTransferEngine#receive()} subscription keeps posted:
 *                          the most messages the engine holds for it at once
 */
public record ReactiveOptions(Duration immTimeout, int receiveBufferSize, int receivePoolSize) {

    /** 30 s imm timeout, 64 KiB buffers, 64 posted per receive subscription. */
    public static final ReactiveOptions DEFAULTS = new ReactiveOptions(Duration.ofSeconds(30), 64 * 1024, 64);

    /**
     * Checks every setting.
     *
     * @throws IllegalArgumentException if the timeout is not positive or a size is less than 1
     */
    public ReactiveOptions {
        if (immTimeout.isNegative() || immTimeout.isZero()) {
            throw new IllegalArgumentException("immTimeout must be positive, was " + immTimeout);
        }
        if (receiveBufferSize < 1) {
            throw new IllegalArgumentException("receiveBufferSize must be >= 1, was " + receiveBufferSize);
        }
        if (receivePoolSize < 1) {
            throw new IllegalArgumentException("receivePoolSize must be >= 1, was " + receivePoolSize);
        }
    }

    /**
     * These settings with another imm timeout.
     *
     * @param value a positive duration
     * @return new settings; these are unchanged
     * @throws IllegalArgumentException if {@code value} is not positive
     */
    public ReactiveOptions withImmTimeout(final Duration value) {
        return new ReactiveOptions(value, receiveBufferSize, receivePoolSize);
    }

    /**
     * These settings with another receive buffer size.
     *
     * @param value bytes per receive buffer, at least 1
     * @return new settings; these are unchanged
     * @throws IllegalArgumentException if {@code value} is less than 1
     */
    public ReactiveOptions withReceiveBufferSize(final int value) {
        return new ReactiveOptions(immTimeout, value, receivePoolSize);
    }

    /**
     * These settings with another receive pool size.
     *
     * @param value buffers per receive subscription, at least 1
     * @return new settings; these are unchanged
     * @throws IllegalArgumentException if {@code value} is less than 1
     */
    public ReactiveOptions withReceivePoolSize(final int value) {
        return new ReactiveOptions(immTimeout, receiveBufferSize, value);
    }
}
