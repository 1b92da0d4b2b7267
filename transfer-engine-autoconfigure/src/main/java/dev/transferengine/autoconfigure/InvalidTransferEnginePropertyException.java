package dev.transferengine.autoconfigure;

import java.io.Serial;

/**
 * A {@code transfer-engine.*} property has a value the engine cannot start with; turned into a start-up report by
 * {@link InvalidTransferEnginePropertyFailureAnalyzer}.
 */
public final class InvalidTransferEnginePropertyException extends RuntimeException {

    @Serial
    private static final long serialVersionUID = 1L;

    private final String property;
    private final String value;
    private final String action;

    /**
     * @param property the full property name, e.g. {@code transfer-engine.groups[0].nics}
     * @param value    the value it has
     * @param problem  what is wrong with it
     * @param action   how to fix it
     */
    public InvalidTransferEnginePropertyException(
            final String property, final Object value, final String problem, final String action) {
        super("transfer-engine property '" + property + "' is '" + value + "': " + problem);
        this.property = property;
        this.value = String.valueOf(value);
        this.action = action;
    }

    public String property() {
        return property;
    }

    public String value() {
        return value;
    }

    /** How to fix the configuration. */
    public String action() {
        return action;
    }
}
