package dev.transferengine.autoconfigure.jackson;

import dev.transferengine.NetworkAddress;
import dev.transferengine.RegionDescriptor;
import dev.transferengine.exceptions.MalformedDescriptorException;

import java.util.function.Function;

import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.deser.std.StdScalarDeserializer;
import tools.jackson.databind.module.SimpleModule;
import tools.jackson.databind.ser.std.ToStringSerializerBase;

/**
 * Writes {@link RegionDescriptor} and {@link NetworkAddress} as JSON strings in their text forms ({@link RegionDescriptor#toText()}, URL-safe
 * base64; {@link NetworkAddress#toString()}, hex) and reads them back, so a controller can return descriptors and a client
 * can read them. Text that is not a descriptor fails with Jackson's {@code InvalidFormatException} naming the
 * engine's reason, e.g. "RegionDescriptor is truncated (12 bytes)".
 *
 * <p>The starter registers it with Spring Boot's {@code JsonMapper}; elsewhere add it with
 * {@code JsonMapper.builder().addModule(new TransferEngineJacksonModule())}.
 */
public final class TransferEngineJacksonModule extends SimpleModule {

    private static final long serialVersionUID = 1L;

    /** A module writing and reading both descriptor types. */
    public TransferEngineJacksonModule() {
        super("transfer-engine");
        addSerializer(RegionDescriptor.class, new TextSerializer<>(RegionDescriptor.class, RegionDescriptor::toText));
        addDeserializer(
                RegionDescriptor.class, new TextDeserializer<>(RegionDescriptor.class, RegionDescriptor::parse));
        addSerializer(NetworkAddress.class, new TextSerializer<>(NetworkAddress.class, NetworkAddress::toString));
        addDeserializer(NetworkAddress.class, new TextDeserializer<>(NetworkAddress.class, NetworkAddress::parse));
    }

    /** Writes a value as the string {@code toText} makes of it. */
    private static final class TextSerializer<T> extends ToStringSerializerBase {

        private final Class<T> type;
        private final Function<T, String> toText;

        TextSerializer(final Class<T> type, final Function<T, String> toText) {
            super(type);
            this.type = type;
            this.toText = toText;
        }

        @Override
        public String valueToString(final Object value) {
            return toText.apply(type.cast(value));
        }
    }

    /** Reads a JSON string with {@code parse}; anything else, or text {@code parse} refuses, is a typed error. */
    private static final class TextDeserializer<T> extends StdScalarDeserializer<T> {

        private final Class<T> type;
        private final Function<String, T> parse;

        TextDeserializer(final Class<T> type, final Function<String, T> parse) {
            super(type);
            this.type = type;
            this.parse = parse;
        }

        @Override
        public T deserialize(final JsonParser parser, final DeserializationContext context) {
            if (!parser.hasToken(JsonToken.VALUE_STRING)) {
                return type.cast(context.handleUnexpectedToken(type, parser));
            }
            final String text = parser.getString();
            try {
                return parse.apply(text);
            } catch (final MalformedDescriptorException e) {
                throw context.weirdStringException(text, type, e.getMessage());
            }
        }
    }
}
