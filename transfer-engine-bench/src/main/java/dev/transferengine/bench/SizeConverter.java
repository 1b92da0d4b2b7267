package dev.transferengine.bench;

import picocli.CommandLine.ITypeConverter;

/** picocli converter for sizes such as {@code 1MiB}; see {@link Units#parseSize(String)}. */
public final class SizeConverter implements ITypeConverter<Long> {

    @Override
    public Long convert(final String value) {
        return Units.parseSize(value);
    }
}
