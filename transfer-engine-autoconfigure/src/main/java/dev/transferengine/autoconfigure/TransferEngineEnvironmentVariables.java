package dev.transferengine.autoconfigure;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.origin.SystemEnvironmentOrigin;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Refuses {@code TRANSFER_ENGINE_*} (and {@code TRANSFERENGINE_*}) environment variables that set no property.
 * Spring Boot binds both forms, but its check for unknown keys ({@code ignoreUnknownFields = false}) sees neither,
 * so a typo in a variable would be ignored. Start-up only; allocates.
 */
final class TransferEngineEnvironmentVariables {

    private TransferEngineEnvironmentVariables() {}

    /**
     * @throws UnboundConfigurationPropertiesException naming each unknown variable, reported by
     *                                                 {@link UnknownTransferEnginePropertyFailureAnalyzer}
     */
    static void check(final Environment environment) {
        if (!(environment instanceof final ConfigurableEnvironment configurable)) {
            return;
        }
        final Set<ConfigurationProperty> unknown = new LinkedHashSet<>();
        for (final PropertySource<?> source : configurable.getPropertySources()) {
            if (source instanceof final SystemEnvironmentPropertySource variables) {
                for (final String variable : variables.getPropertyNames()) {
                    if (TransferEnginePropertyNames.isEnvironmentVariableForUs(variable)
                            && !TransferEnginePropertyNames.isKnownEnvironmentVariable(variable)) {
                        unknown.add(new ConfigurationProperty(
                                ConfigurationPropertyName.adapt(variable.toLowerCase(Locale.ROOT), '_'),
                                String.valueOf(variables.getProperty(variable)),
                                new SystemEnvironmentOrigin(variable)));
                    }
                }
            }
        }
        if (!unknown.isEmpty()) {
            throw new UnboundConfigurationPropertiesException(unknown);
        }
    }
}
