package dev.transferengine.autoconfigure.discovery;

import java.util.Locale;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an engine that could not be announced in its descriptor registry, with the Spring properties that decide
 * how the registry connects: for Redis the credentials ({@code spring.data.redis.username/password}), the TLS trust
 * ({@code spring.data.redis.ssl.bundle}) or whether to speak TLS at all ({@code spring.data.redis.ssl.enabled}),
 * picked by what the server or the TLS stack said.
 */
final class DescriptorRegistryFailureAnalyzer extends AbstractFailureAnalyzer<DescriptorRegistryUnavailableException> {

    @Override
    protected FailureAnalysis analyze(final Throwable rootFailure, final DescriptorRegistryUnavailableException cause) {
        return new FailureAnalysis(
                "The transfer engine could not start: " + cause.getMessage() + ".", action(cause), cause);
    }

    private static String action(final DescriptorRegistryUnavailableException cause) {
        if (!cause.registry().equals(RedisDescriptorRegistry.class.getSimpleName())) {
            return "Check that the registry of transfer-engine.discovery.type can be reached from here.";
        }
        final String chain = chain(cause);
        if (chain.contains("WRONGPASS") || chain.contains("NOAUTH") || chain.contains("NOPERM")) {
            return "Redis refused the credentials or a command: set spring.data.redis.username and"
                    + " spring.data.redis.password to an ACL user with the rights docs/spring-boot.md (Discovery)"
                    + " lists.";
        }
        if (chain.contains("sslhandshake") || chain.contains("certificate") || chain.contains("pkix")) {
            return "TLS to Redis failed: the trust store of the SSL bundle named by spring.data.redis.ssl.bundle must"
                    + " hold the certificate authority that signed the Redis server's certificate, and the"
                    + " certificate must name spring.data.redis.host.";
        }
        return "Check that Redis runs at spring.data.redis.host and spring.data.redis.port, and that the client speaks"
                + " what the server does: a server with only a TLS port needs spring.data.redis.ssl.enabled=true (or"
                + " spring.data.redis.ssl.bundle), a plain one needs it off.";
    }

    /** Every message in the cause chain, with exception types, upper-case server errors kept. */
    private static String chain(final Throwable cause) {
        final StringBuilder text = new StringBuilder();
        for (Throwable t = cause; t != null; t = t.getCause()) {
            text.append(t.getClass().getSimpleName().toLowerCase(Locale.ROOT))
                    .append(' ')
                    .append(t.getMessage())
                    .append('\n');
        }
        final String all = text.toString();
        return all + all.toLowerCase(Locale.ROOT);
    }
}
