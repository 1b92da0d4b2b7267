package dev.transferengine.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a {@code transfer-engine.*} property the engine cannot start with, and how to fix it. */
final class InvalidTransferEnginePropertyFailureAnalyzer
        extends AbstractFailureAnalyzer<InvalidTransferEnginePropertyException> {

    @Override
    protected FailureAnalysis analyze(final Throwable rootFailure, final InvalidTransferEnginePropertyException cause) {
        return new FailureAnalysis(
                "The transfer engine could not start: " + cause.getMessage() + ".", cause.action(), cause);
    }
}
