package dev.transferengine.autoconfigure.discovery;

/**
 * What a {@link DescriptorRegistry#watch()} saw happen to one engine.
 *
 * @param kind   appeared, changed or vanished
 * @param engine the entry as it is now; for {@link Kind#VANISHED}, as it was last seen
 */
public record RegistryChange(Kind kind, RegisteredEngine engine) {

    /** What happened. */
    public enum Kind {
        /** The engine is new in the registry (or the watch just started and found it there). */
        APPEARED,
        /** The engine's entry has another generation: it restarted, or published or withdrew a region. */
        CHANGED,
        /** The engine's entry is gone: it unpublished, or its lease ran out. */
        VANISHED
    }

    /**
     * The engine's name, for filtering.
     *
     * @return {@code engine().name()}
     */
    public String name() {
        return engine.name();
    }
}
