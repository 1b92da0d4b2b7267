package dev.transferengine.bench;

import java.time.Duration;

import picocli.CommandLine.ITypeConverter;

/** picocli converter for durations such as {@code 5s} or {@code 200ms}; see {@link Units#parseDuration(String)}. */
public final class DurationConverter implements ITypeConverter<Duration> {

    @Override
    public Duration convert(final String value) {
        return Units.parseDuration(value);
    }
}
