package dev.transferengine;

import java.io.Serial;

/** The requested transport cannot run here; the message says why (missing library, provider, device...). */
public final class TransportUnavailableException extends TransferEngineException {

    @Serial
    private static final long serialVersionUID = 1L;

    private final String transport;

    public TransportUnavailableException(final String transport, final String reason) {
        super("transport '" + transport + "' unavailable: " + reason);
        this.transport = transport;
    }

    public TransportUnavailableException(final String transport, final String reason, final Throwable cause) {
        super("transport '" + transport + "' unavailable: " + reason, cause);
        this.transport = transport;
    }

    public String transport() {
        return transport;
    }
}
