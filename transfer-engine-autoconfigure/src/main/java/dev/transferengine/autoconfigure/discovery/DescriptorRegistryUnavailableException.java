package dev.transferengine.autoconfigure.discovery;

import java.io.Serial;

/**
 * The engine could not be announced in its descriptor registry at start-up (Redis unreachable, refused the
 * credentials, or TLS failed); turned into a start-up report by {@link DescriptorRegistryFailureAnalyzer}.
 */
public final class DescriptorRegistryUnavailableException extends RuntimeException {

    @Serial
    private static final long serialVersionUID = 1L;

    /** The registry's kind, e.g. {@code RedisDescriptorRegistry}. */
    private final String registry;

    /**
     * @param engineName the engine that was to be announced
     * @param registry   the registry's kind
     * @param cause      why it could not be
     */
    DescriptorRegistryUnavailableException(final String engineName, final String registry, final Throwable cause) {
        super(
                "engine '" + engineName + "' could not be announced in the descriptor registry (" + registry + "): "
                        + innermost(cause),
                cause);
        this.registry = registry;
    }

    /**
     * The registry's kind.
     *
     * @return e.g. {@code RedisDescriptorRegistry}
     */
    public String registry() {
        return registry;
    }

    /** The message of the innermost cause, which says what the server or the TLS stack refused. */
    private static String innermost(final Throwable cause) {
        Throwable inner = cause;
        while (inner.getCause() != null) {
            inner = inner.getCause();
        }
        return inner.equals(cause) ? String.valueOf(cause.getMessage()) : cause.getMessage() + "; caused by " + inner;
    }
}
