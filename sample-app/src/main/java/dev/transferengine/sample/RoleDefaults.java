package dev.transferengine.sample;

import java.util.Locale;
import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Defaults that depend on {@code sample.role}, below every other property source so that the command line, the
 * environment and application.yml still win. The demo runs on loopback for one user, who follows the README and
 * curls {@code /actuator/prometheus} and {@code /actuator/transferengine} without knowing the demo's random token:
 * those read-only endpoints and the health details are open there. In every other role only {@code health} is open,
 * and its details (NICs, peers, TLS and key mode) show to callers with the token only.
 */
public final class RoleDefaults implements EnvironmentPostProcessor, Ordered {

    /** The name of the property source this adds. */
    static final String SOURCE = "sampleRoleDefaults";

    /** The demo's open actuator endpoints: read-only, nothing in them lets a caller touch a region. */
    static final String DEMO_OPEN_ENDPOINTS = "health,prometheus,transferengine";

    @Override
    public void postProcessEnvironment(final ConfigurableEnvironment environment, final SpringApplication application) {
        final boolean demo = environment
                .getProperty("sample.role", "demo")
                .strip()
                .toLowerCase(Locale.ROOT)
                .equals("demo");
        final Map<String, Object> defaults = demo
                ? Map.of(
                        "sample.security.open-endpoints",
                        DEMO_OPEN_ENDPOINTS,
                        "management.endpoint.health.show-details",
                        "always")
                : Map.of(
                        "sample.security.open-endpoints", "health",
                        "management.endpoint.health.show-details", "when-authorized");
        environment.getPropertySources().addLast(new MapPropertySource(SOURCE, defaults));
    }

    /** After the config files are read, so that a {@code sample.role} in application.yml counts. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
