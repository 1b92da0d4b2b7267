package dev.transferengine.bench;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the sizes ({@code 1KiB}, {@code 64KiB}, {@code 1MiB}, {@code 4096}) and durations ({@code 5s}, {@code 200ms}) of the command line. */
final class Units {

    private static final Pattern SIZE =
            Pattern.compile("(\\d+)\\s*(|B|KiB|MiB|GiB|K|M|G|KB|MB|GB)", Pattern.CASE_INSENSITIVE);
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ns|us|ms|s|m)", Pattern.CASE_INSENSITIVE);

    private Units() {}

    /**
     * Bytes of a size; binary suffixes ({@code K}, {@code KiB}, {@code KB} all mean 1024), because pages and buffers are
     * powers of two.
     */
    static long parseSize(final String text) {
        final Matcher m = SIZE.matcher(text.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a size: '" + text + "' (use e.g. 4096, 1KiB, 64KiB, 1MiB)");
        }
        final long value = Long.parseLong(m.group(1));
        final int shift =
                switch (m.group(2).toUpperCase(Locale.ROOT)) {
                    case "", "B" -> 0;
                    case "K", "KB", "KIB" -> 10;
                    case "M", "MB", "MIB" -> 20;
                    default -> 30;
                };
        if (Long.numberOfLeadingZeros(value) <= shift) {
            throw new IllegalArgumentException("size too large: '" + text + "'");
        }
        return value << shift;
    }

    /** A duration with a unit: {@code ns}, {@code us}, {@code ms}, {@code s} or {@code m}. */
    static Duration parseDuration(final String text) {
        final Matcher m = DURATION.matcher(text.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a duration: '" + text + "' (use e.g. 200ms, 5s)");
        }
        final long value = Long.parseLong(m.group(1));
        return switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "ns" -> Duration.ofNanos(value);
            case "us" -> Duration.ofNanos(value * 1_000);
            case "ms" -> Duration.ofMillis(value);
            case "s" -> Duration.ofSeconds(value);
            default -> Duration.ofMinutes(value);
        };
    }
}
