package dev.transferengine.autoconfigure;

import dev.transferengine.exceptions.TransportUnavailableException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a transport that cannot run on this machine, quoting the transport's own reason. */
final class TransportUnavailableFailureAnalyzer extends AbstractFailureAnalyzer<TransportUnavailableException> {

    @Override
    protected FailureAnalysis analyze(final Throwable rootFailure, final TransportUnavailableException cause) {
        return new FailureAnalysis(
                "The transfer engine could not start: " + cause.getMessage() + ".", action(cause.transport()), cause);
    }

    private static String action(final String transport) {
        return switch (transport) {
            case "fabric" ->
                "Install libfabric (Debian package libfabric1) or point transfer-engine.fabric.library-path"
                        + " at it, check transfer-engine.fabric.provider names a provider of this machine (fi_info lists"
                        + " them), or set transfer-engine.transport=tcp.";
            default -> "Set transfer-engine.transport to a transport this machine can run: tcp runs anywhere.";
        };
    }
}
