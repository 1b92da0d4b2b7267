package dev.transferengine.autoconfigure;

import java.beans.PropertyDescriptor;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeanUtils;

/**
 * The valid {@code transfer-engine.*} keys, read from {@link TransferEngineProperties} itself so that they cannot
 * drift from what binds, and the nearest of them to a mistyped one. List elements appear as {@code groups[].nics};
 * a map ({@code options}) is named by itself, since any key below it is valid. Allocates; start-up failures only.
 */
final class TransferEnginePropertyNames {

    private static final String PREFIX = "transfer-engine";
    /** The prefixes of the two forms of environment variable Spring Boot binds: TRANSFER_ENGINE_BIND_ADDRESS, TRANSFERENGINE_BINDADDRESS. */
    private static final List<String> ENVIRONMENT_PREFIXES = List.of("TRANSFER_ENGINE_", "TRANSFERENGINE_");
    /** A list index: [1] in a property name, _1_ (or a trailing _1) in an environment variable. */
    private static final Pattern INDEX_ANY = Pattern.compile("\\[(\\d+)]|(?<=[_.])(\\d+)(?=[_.]|$)");

    private TransferEnginePropertyNames() {}

    /** Every leaf key in canonical form, e.g. {@code transfer-engine.groups[].worker-cpu}, in declaration order. */
    static List<String> all() {
        final List<String> names = new ArrayList<>();
        collect(PREFIX, TransferEngineProperties.class, names);
        return names;
    }

    /**
     * The valid key nearest to {@code unknown} by edit distance, list indices kept as they were; null when nothing
     * is reasonably near. {@code unknown} is a property name in any form Spring Boot binds ({@code
     * transfer-engine.groups[1].nicz}, {@code transfer-engine.bindAdress}) or an environment variable ({@code
     * TRANSFER_ENGINE_TRANSPROT}): both sides are compared in one shape without case, separators and dashes.
     */
    static @Nullable String nearest(final String unknown) {
        final List<String> kept = new ArrayList<>();
        final Matcher indices = INDEX_ANY.matcher(unknown);
        while (indices.find()) {
            kept.add(indices.group(1) != null ? indices.group(1) : indices.group(2));
        }
        final String shape = shape(unknown);
        final String best = all().stream()
                .min(Comparator.comparingInt((final String name) -> distance(shape, shape(name))))
                .orElseThrow();
        // a name that shares less than half its letters with every key is no typo of any of them
        if (distance(shape, shape(best)) > Math.max(2, (best.length() - PREFIX.length()) / 2)) {
            return null;
        }
        final StringBuilder restored = new StringBuilder();
        int from = 0;
        int index = 0;
        for (int at = best.indexOf("[]"); at >= 0; at = best.indexOf("[]", from)) {
            restored.append(best, from, at + 1).append(index < kept.size() ? kept.get(index++) : "0");
            from = at + 1;
        }
        return restored.append(best.substring(from)).toString();
    }

    /** Whether {@code variable} is meant for the transfer engine: it starts with one of the prefixes Boot binds. */
    static boolean isEnvironmentVariableForUs(final String variable) {
        final String upper = variable.toUpperCase(Locale.ROOT);
        return ENVIRONMENT_PREFIXES.stream().anyMatch(upper::startsWith);
    }

    /**
     * Whether {@code variable} (e.g. {@code TRANSFER_ENGINE_GROUPS_0_WORKER_CPU}) names a valid key, in either form
     * Spring Boot binds; its own unbound-key check does not see typos in environment variables. Anything under
     * {@code TRANSFER_ENGINE_OPTIONS_} is valid.
     */
    static boolean isKnownEnvironmentVariable(final String variable) {
        final String upper = variable.toUpperCase(Locale.ROOT);
        if (ENVIRONMENT_PREFIXES.stream().anyMatch(prefix -> upper.startsWith(prefix + "OPTIONS_"))) {
            return true;
        }
        // a trailing index sets one element of a list of values, e.g. TRANSFER_ENGINE_METRICS_LATENCY_SLO_0
        final String shape = shape(variable).replaceFirst("#$", "");
        return all().stream().anyMatch(name -> shape(name).equals(shape));
    }

    /** The environment variable that sets {@code name}, e.g. TRANSFER_ENGINE_GROUPS_0_WORKER_CPU. */
    static String environmentVariable(final String name) {
        return name.toUpperCase(Locale.ROOT).replaceAll("[.\\-\\[\\]]+", "_").replaceAll("_$", "");
    }

    /** Whether {@code name}, in any of the forms {@link #nearest} takes, is under {@code transfer-engine}. */
    static boolean isTransferEngineKey(final String name) {
        return shape(name).startsWith("TRANSFERENGINE");
    }

    /** Upper case, indices as '#', without dots, dashes and underscores. */
    private static String shape(final String name) {
        final String indexed = INDEX_ANY.matcher(name).replaceAll("#").replace("[]", "#");
        final StringBuilder shape = new StringBuilder(indexed.length());
        for (int i = 0; i < indexed.length(); i++) {
            final char c = indexed.charAt(i);
            if (c != '.' && c != '-' && c != '_') {
                shape.append(Character.toUpperCase(c));
            }
        }
        return shape.toString();
    }

    private static void collect(final String path, final Class<?> type, final List<String> names) {
        for (final PropertyDescriptor property : BeanUtils.getPropertyDescriptors(type)) {
            final Method getter = property.getReadMethod();
            if (getter == null || property.getName().equals("class")) {
                continue;
            }
            final String name = path + "." + dashed(property.getName());
            final Class<?> valueType = property.getPropertyType();
            final Class<?> element =
                    List.class.isAssignableFrom(valueType) ? element(getter.getGenericReturnType()) : Object.class;
            if (nested(element)) {
                collect(name + "[]", element, names);
            } else if (nested(valueType)) {
                collect(name, valueType, names);
            } else {
                names.add(name); // a value, or a free map such as options
            }
        }
    }

    private static boolean nested(final Class<?> type) {
        return type.getEnclosingClass() == TransferEngineProperties.class;
    }

    private static Class<?> element(final Type listType) {
        if (listType instanceof final ParameterizedType parameterized
                && parameterized.getActualTypeArguments()[0] instanceof final Class<?> element) {
            return element;
        }
        return Object.class;
    }

    private static String dashed(final String camel) {
        final StringBuilder dashed = new StringBuilder(camel.length() + 4);
        for (int i = 0; i < camel.length(); i++) {
            final char c = camel.charAt(i);
            if (Character.isUpperCase(c)) {
                dashed.append('-').append(Character.toLowerCase(c));
            } else {
                dashed.append(c);
            }
        }
        return dashed.toString().toLowerCase(Locale.ROOT);
    }

    /** Levenshtein distance. */
    static int distance(final String a, final String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                final int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            final int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
