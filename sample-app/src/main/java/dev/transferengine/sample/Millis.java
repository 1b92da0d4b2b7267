package dev.transferengine.sample;

/** Durations as the JSON reports show them: milliseconds with microsecond resolution. */
public final class Millis {

    private Millis() {}

    /**
     * Converts nanoseconds to milliseconds.
     *
     * @param nanos a duration in nanoseconds
     * @return the same in milliseconds, rounded to three decimals
     */
    public static double of(final long nanos) {
        return Math.round(nanos / 1_000.0) / 1_000.0;
    }
}
