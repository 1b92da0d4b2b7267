package dev.transferengine.autoconfigure;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Configuration;

/**
 * An application with only the engine's auto-configuration, started by {@link NativeAccessStartupTests} in a JVM
 * of its own without {@code --enable-native-access}; its arguments are properties ({@code --key=value}). Exits 0
 * once started, 1 when start-up failed (Spring Boot has then printed the failure analysis).
 */
@Configuration(proxyBeanMethods = false)
@ImportAutoConfiguration(TransferEngineAutoConfiguration.class)
class NativeAccessStartupApplication {

    public static void main(final String[] args) {
        try {
            new SpringApplicationBuilder(NativeAccessStartupApplication.class)
                    .web(WebApplicationType.NONE)
                    .run(args)
                    .close();
        } catch (final RuntimeException e) {
            System.exit(1);
        }
        System.exit(0);
    }
}
