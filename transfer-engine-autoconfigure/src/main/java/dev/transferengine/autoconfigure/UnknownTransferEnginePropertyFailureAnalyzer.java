package dev.transferengine.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.origin.SystemEnvironmentOrigin;
import org.springframework.core.Ordered;

/**
 * Reports keys under {@code transfer-engine.} that match no property, each with the nearest valid key and where
 * it was set (a file and line, or an environment variable). Runs before Spring Boot's generic report of unbound
 * properties, which names no alternative.
 */
final class UnknownTransferEnginePropertyFailureAnalyzer
        extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException> implements Ordered {

    @Override
    protected @Nullable FailureAnalysis analyze(
            final Throwable rootFailure, final UnboundConfigurationPropertiesException cause) {
        final List<String> problems = new ArrayList<>();
        final List<String> fixes = new ArrayList<>();
        for (final ConfigurationProperty property : cause.getUnboundProperties()) {
            final boolean variable = property.getOrigin() instanceof SystemEnvironmentOrigin;
            final String name = property.getOrigin() instanceof final SystemEnvironmentOrigin origin
                    ? origin.getProperty()
                    : property.getName().toString();
            if (!TransferEnginePropertyNames.isTransferEngineKey(name)) {
                continue;
            }
            final String nearest = TransferEnginePropertyNames.nearest(name);
            problems.add("'" + name + "'" + (property.getOrigin() == null ? "" : " (" + property.getOrigin() + ")")
                    + " is no transfer-engine property" + (nearest == null ? "" : "; did you mean " + nearest + "?"));
            if (nearest == null) {
                fixes.add("remove " + name);
            } else {
                fixes.add("rename " + name + " to "
                        + (variable
                                ? TransferEnginePropertyNames.environmentVariable(nearest) + " (" + nearest + ")"
                                : nearest));
            }
        }
        if (problems.isEmpty()) {
            return null;
        }
        final String description = String.join("; ", problems);
        return new FailureAnalysis(
                "The transfer engine could not start: " + description + (description.endsWith("?") ? "" : "."),
                "Fix the key: " + String.join(", ", fixes)
                        + ". docs/spring-boot.md lists every transfer-engine property;"
                        + " engine options the starter has no property for go under transfer-engine.options.*.",
                cause);
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
