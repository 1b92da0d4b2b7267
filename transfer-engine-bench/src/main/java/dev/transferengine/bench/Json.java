package dev.transferengine.bench;

import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;

/** Writes the result line: one compact JSON object with snake_case keys. */
final class Json {

    private static final JsonMapper MAPPER = JsonMapper.builder()
        .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
        .build();

    private Json() {
    }

    static String line(final Object value) {
        return MAPPER.writeValueAsString(value);
    }
}
