package dev.transferengine.autoconfigure;

import java.io.Serial;

/**
 * A {@code transfer-engine.*} property has a value the engine cannot start with; turned into a start-up report by
 * {@link InvalidTransferEnginePropertyFailureAnalyzer}.
 */
public final class InvalidTransferEnginePropertyException extends RuntimeException {

    @Serial
    private static final long serialVersionUID = 1L;

    /** The full property name. */
    private final String property;

    /** The value it has, as text. */
    private final String value;

    /** How to fix it. */
    private final String action;

    /**
     * A property the engine cannot start with; the message reads "{@code transfer-engine property '<property>' is
     * '<value>': <problem>}".
     *
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

    /**
     * The property that is wrong, for the failure report.
     *
     * @return the full property name, e.g. {@code transfer-engine.groups[0].nics}
     */
    public String property() {
        return property;
    }

    /**
     * The value the property has.
     *
     * @return the value, as {@link String#valueOf(Object)} wrote it
     */
    public String value() {
        return value;
    }

    /**
     * How to fix the configuration.
     *
     * @return the action for the failure report
     */
    public String action() {
        return action;
    }
}
