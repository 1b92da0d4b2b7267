package dev.transferengine.sample;

import java.util.Arrays;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches when the configured {@code sample.role} is among the roles of {@link ConditionalOnRole}. */
final class OnRoleCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(final ConditionContext context, final AnnotatedTypeMetadata metadata) {
        final @Nullable Map<String, @Nullable Object> attributes =
                metadata.getAnnotationAttributes(ConditionalOnRole.class.getName());
        final Role[] roles = attributes == null ? new Role[0] : (Role[]) attributes.get("value");
        final String configured = context.getEnvironment().getProperty("sample.role", "demo");
        final Role role;
        try {
            role = Role.valueOf(configured.strip().toUpperCase(Locale.ROOT));
        } catch (final IllegalArgumentException e) {
            // fail the start-up rather than run a service that does nothing
            throw new IllegalStateException(
                    "sample.role must be one of " + Arrays.toString(Role.values()) + " (lower case works too), was '"
                            + configured + "'",
                    e);
        }
        final boolean match = Arrays.asList(roles).contains(role);
        return new ConditionOutcome(match, "sample.role is " + role + ", bean wants " + Arrays.toString(roles));
    }
}
