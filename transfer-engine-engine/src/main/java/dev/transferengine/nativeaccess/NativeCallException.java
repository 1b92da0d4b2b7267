package dev.transferengine.nativeaccess;

import dev.transferengine.exceptions.TransferEngineException;

import java.io.Serial;

/**
 * A native call failed. Carries the function's name, the code it returned (a negative libfabric or errno value, as
 * the library reports it) and the library's own description of that code.
 */
public final class NativeCallException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    private final String function;
    private final int code;
    private final String description;

    /**
     * @param function    the native function, e.g. {@code fi_getinfo}
     * @param code        the failure code as returned (usually negative)
     * @param description the library's text for {@code code} (e.g. from {@code fi_strerror})
     * @param errno       errno right after the call, or 0 when not captured or not set
     */
    public NativeCallException(final String function, final int code, final String description, final int errno) {
        super(function + " failed: " + code + " (" + description + ")"
                + (errno != 0 && errno != Math.abs(code)
                        ? ", errno " + errno + " (" + Errno.describe(errno) + ")"
                        : ""));
        this.function = function;
        this.code = code;
        this.description = description;
    }

    /** The native function that failed. */
    public String function() {
        return function;
    }

    /** The code it returned. */
    public int code() {
        return code;
    }

    /** The library's text for {@link #code()}. */
    public String description() {
        return description;
    }
}
