package dev.transferengine.bench;

import java.util.Map;

import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/** Writes the result line: one compact JSON object with snake_case keys. */
final class Json {

    private static final JsonMapper MAPPER = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .build();

    private Json() {}

    /** {@code value}'s object with {@code extra}'s entries (snake_case keys already, maybe none) added at its end. */
    static String line(final Object value, final Map<String, Object> extra) {
        final ObjectNode node = MAPPER.valueToTree(value);
        extra.forEach((key, entry) -> node.set(key, MAPPER.valueToTree(entry)));
        return MAPPER.writeValueAsString(node);
    }
}
