package dev.transferengine.autoconfigure;

import dev.transferengine.TransferEngineBuilder;

/**
 * Customizes the auto-configured engine's builder after the {@code transfer-engine.*} properties were applied;
 * declare one as a bean to set what the properties do not cover.
 */
@FunctionalInterface
public interface TransferEngineBuilderCustomizer {

    void customize(TransferEngineBuilder builder);
}
