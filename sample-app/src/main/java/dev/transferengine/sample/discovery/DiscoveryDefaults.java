package dev.transferengine.sample.discovery;

import java.util.HashMap;
import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Turns {@code sample.discovery} into the starter's settings, below every other property source: {@code redis}
 * selects {@code transfer-engine.discovery.type=redis}; otherwise Boot's Redis health indicator is off, so that a
 * node without discovery is not DOWN for want of a Redis it never uses.
 */
public final class DiscoveryDefaults implements EnvironmentPostProcessor, Ordered {

    /** The sample's switch: {@code none} (default) or {@code redis}. */
    static final String PROPERTY = "sample.discovery";

    /** Creates the post-processor; Spring Boot calls it. */
    public DiscoveryDefaults() {}

    @Override
    public void postProcessEnvironment(final ConfigurableEnvironment environment, final SpringApplication application) {
        final String discovery = environment.getProperty(PROPERTY, "none");
        final Map<String, Object> defaults = new HashMap<>();
        if (discovery.equalsIgnoreCase("redis")) {
            defaults.put("transfer-engine.discovery.type", "redis");
        } else if (discovery.equalsIgnoreCase("none")) {
            defaults.put("management.health.redis.enabled", "false");
        } else {
            throw new IllegalArgumentException(PROPERTY + " is 'none' or 'redis', was '" + discovery + "'");
        }
        environment.getPropertySources().addLast(new MapPropertySource("sampleDiscoveryDefaults", defaults));
    }

    /** After the config files are read, so that a {@code sample.discovery} in application.yml counts. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
