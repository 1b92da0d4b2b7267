package dev.transferengine.autoconfigure;

import dev.transferengine.TransferEngineBuilder;

/**
 * Customizes the auto-configured engine's builder after the {@code transfer-engine.*} properties were applied;
 * declare one as a bean to set what the properties do not cover.
 */
@FunctionalInterface
public interface TransferEngineBuilderCustomizer {

    /**
     * Changes the builder before the engine is built; called once, in {@code @Order}, while the engine bean is created.
     *
     * @param builder the builder, with the properties applied
     */
    void customize(TransferEngineBuilder builder);
}
