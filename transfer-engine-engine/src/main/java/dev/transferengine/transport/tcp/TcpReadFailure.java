package dev.transferengine.transport.tcp;

import dev.transferengine.exceptions.RemoteAccessException.Reason;

import org.jspecify.annotations.Nullable;

/**
 * Why an owner stopped serving a read it had accepted, as the {@code aux} field of a READ_FAILED frame carries it
 * ({@link TcpFrame}). The codes are part of the wire protocol and never change meaning; a new reason gets a new code
 * (and a feature bit, as a reader of this version refuses a code it does not know).
 */
enum TcpReadFailure {
    /** The device memory the read copies from was freed (or freed and allocated again), or its region deregistered. */
    MEMORY_LOST(1, Reason.REGION_DEREGISTERED, "its memory was freed or its region deregistered"),
    /** A copy of the read's bytes off the owner's device failed. */
    COPY_FAILED(2, Reason.SOURCE_FAILED, "a copy of the bytes off its device failed");

    private static final TcpReadFailure[] ALL = values();

    private final int code;
    private final Reason reason;
    private final String explanation;

    TcpReadFailure(final int code, final Reason reason, final String explanation) {
        this.code = code;
        this.reason = reason;
        this.explanation = explanation;
    }

    /** The value on the wire. */
    int code() {
        return code;
    }

    /** What the reader's {@link dev.transferengine.exceptions.RemoteAccessException} reports. */
    Reason reason() {
        return reason;
    }

    /** Why, in words, for the reader's error message. */
    String explanation() {
        return explanation;
    }

    /** The failure with this wire code, or null for a code this version does not know. */
    static @Nullable TcpReadFailure ofCode(final int code) {
        for (final TcpReadFailure failure : ALL) {
            if (failure.code == code) {
                return failure;
            }
        }
        return null;
    }
}
