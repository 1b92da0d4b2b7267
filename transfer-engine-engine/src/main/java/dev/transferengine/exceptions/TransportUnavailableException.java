package dev.transferengine.exceptions;

import dev.transferengine.EngineConfig;

import java.io.Serial;

/** The requested transport cannot run here; the message says why (missing library, provider, device...). */
public final class TransportUnavailableException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    /** The transport's name. */
    private final String transport;

    /**
     * A transport that cannot run here.
     *
     * @param transport the transport's name, e.g. {@code "fabric"}
     * @param reason why it cannot run here; the message reads "{@code transport '<transport>' unavailable: <reason>}"
     */
    public TransportUnavailableException(final String transport, final String reason) {
        super("transport '" + transport + "' unavailable: " + reason);
        this.transport = transport;
    }

    /**
     * A transport that cannot run here, because of a failure underneath.
     *
     * @param transport the transport's name, e.g. {@code "fabric"}
     * @param reason why it cannot run here
     * @param cause the failure underneath, e.g. a library that failed to load
     */
    public TransportUnavailableException(final String transport, final String reason, final Throwable cause) {
        super("transport '" + transport + "' unavailable: " + reason, cause);
        this.transport = transport;
    }

    /**
     * The transport that cannot run, as named in {@link EngineConfig#transport()}.
     *
     * @return the transport's name, e.g. {@code "tcp"} or {@code "fabric"}
     */
    public String transport() {
        return transport;
    }
}
