package dev.transferengine.cuda;

import java.util.Arrays;
import java.util.Locale;

/** Summarises latency samples (nanoseconds) as microsecond percentiles for the benchmarks' output. */
final class Percentiles {

    private Percentiles() {}

    static String summary(final String name, final long[] samples) {
        final long[] sorted = samples.clone();
        Arrays.sort(sorted);
        final double mean = Arrays.stream(sorted).average().orElse(0);
        return String.format(
                Locale.ROOT,
                "%-44s n=%d  min %.2f  p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f  mean %.2f (us)",
                name,
                sorted.length,
                us(sorted[0]),
                us(at(sorted, 0.50)),
                us(at(sorted, 0.90)),
                us(at(sorted, 0.99)),
                us(at(sorted, 0.999)),
                us(sorted[sorted.length - 1]),
                mean / 1000.0);
    }

    private static long at(final long[] sorted, final double quantile) {
        return sorted[(int) Math.ceil(quantile * sorted.length) - 1];
    }

    private static double us(final long nanos) {
        return nanos / 1000.0;
    }
}
