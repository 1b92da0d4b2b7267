package dev.transferengine.autoconfigure;

import dev.transferengine.exceptions.TransferEngineException;

import java.net.BindException;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Reports an engine NIC that could not bind its port. Runs before the other analyzers of the engine's errors,
 * since a transport may report a bind failure as unavailability.
 */
final class TransferEnginePortInUseFailureAnalyzer extends AbstractFailureAnalyzer<BindException> implements Ordered {

    private final Environment environment;

    TransferEnginePortInUseFailureAnalyzer(final Environment environment) {
        this.environment = environment;
    }

    @Override
    protected @Nullable FailureAnalysis analyze(final Throwable rootFailure, final BindException cause) {
        if (findCause(rootFailure, TransferEngineException.class) == null) {
            return null;
        }
        final String address = environment.getProperty("transfer-engine.bind-address", "127.0.0.1");
        final String port = environment.getProperty("transfer-engine.base-port", "0");
        return new FailureAnalysis(
                "The transfer engine could not bind its NICs to " + address + " from base port " + port
                        + " (NIC k of group g uses base-port + 4g + k): " + cause.getMessage() + ".",
                "Stop the process using those ports, set transfer-engine.base-port to a free range, or set it to 0 for"
                        + " ephemeral ports.",
                cause);
    }

    @Override
    public int getOrder() {
        return 0;
    }
}
