package dev.transferengine.autoconfigure.discovery;

import java.util.regex.Pattern;

/** Checks of the names that go into a registry. */
final class RegistryNames {

    /** Safe in Redis keys (hash tags included), URLs and logs. */
    private static final Pattern ENGINE = Pattern.compile("[A-Za-z0-9._-]{1,128}");

    private RegistryNames() {}

    /**
     * Checks an engine name.
     *
     * @return the name
     * @throws IllegalArgumentException naming the rule, if it breaks it
     */
    static String engine(final String name) {
        if (!ENGINE.matcher(name).matches()) {
            throw new IllegalArgumentException(
                    "an engine name in the registry is 1 to 128 of A-Z a-z 0-9 . _ -: '" + name + "'");
        }
        return name;
    }

    /**
     * Checks a region name.
     *
     * @return the name
     * @throws IllegalArgumentException naming the rule, if it breaks it
     */
    static String region(final String name) {
        if (name.isBlank() || name.contains("/") || name.contains("\n") || name.contains("\r")) {
            throw new IllegalArgumentException(
                    "a published region's name must be non-blank, without '/' or line breaks: '" + name + "'");
        }
        return name;
    }
}
