package dev.transferengine.exceptions;

import dev.transferengine.EngineConfig;
import dev.transferengine.GroupSpec;

import java.io.Serial;

/**
 * A setting of {@link EngineConfig} or {@link GroupSpec} is out of range. These two records are the one place the
 * rules live: a front end (the Spring Boot properties, a CLI) builds its config through them and maps
 * {@link #setting()} to its own name for the setting instead of checking the rules again.
 */
public final class InvalidConfigException extends IllegalArgumentException {

    @Serial
    private static final long serialVersionUID = 1L;

    /** The record component that is wrong. */
    private final String setting;

    private final transient Object value;

    /**
     * A setting that breaks its rule; the message reads "{@code <setting> <rule>, was <value>}".
     *
     * @param setting the record component that is wrong, e.g. {@code submitQueueCapacity} or {@code nics}
     * @param value   the value it was given
     * @param rule    what it must be, e.g. {@code "must be a power of two"}
     */
    public InvalidConfigException(final String setting, final Object value, final String rule) {
        super(setting + " " + rule + ", was " + value);
        this.setting = setting;
        this.value = value;
    }

    /**
     * The setting that is wrong, for a front end to map to its own name.
     *
     * @return the record component that is wrong, e.g. {@code submitQueueCapacity}, {@code basePort} or {@code nics}
     */
    public String setting() {
        return setting;
    }

    /**
     * The rejected value. It is transient: after deserialization it is {@code null} and only the message keeps it.
     *
     * @return the value the setting was given
     */
    public Object value() {
        return value;
    }
}
