package dev.transferengine.sample.security;

import dev.transferengine.sample.Role;
import dev.transferengine.sample.SampleProperties;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The bearer token of a deployment: callers present it, and this node presents it to its peers.
 */
public final class ServiceToken {

    private static final int GENERATED_BYTES = 32;

    private final byte[] token;

    private ServiceToken(final String token) {
        this.token = token.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The configured token; in the {@code demo} role without one, a random one that only this process knows (its
     * own loop calls its own API with it).
     *
     * @param properties the sample's settings
     * @return the token
     * @throws IllegalStateException if no token is configured in another role, or it is too short to be a secret
     */
    public static ServiceToken of(final SampleProperties properties) {
        final @Nullable String configured = properties.security().token();
        if (configured == null || configured.isBlank()) {
            if (properties.role() != Role.DEMO) {
                throw new IllegalStateException("sample.security.token is required in role "
                        + properties.role().name().toLowerCase(Locale.ROOT)
                        + ": set the same secret on every node, e.g. SAMPLE_SECURITY_TOKEN=$(openssl rand -hex 32)");
            }
            final byte[] random = new byte[GENERATED_BYTES];
            new SecureRandom().nextBytes(random);
            return new ServiceToken(HexFormat.of().formatHex(random));
        }
        if (configured.length() < 16) {
            throw new IllegalStateException(
                    "sample.security.token must have at least 16 characters, has " + configured.length());
        }
        return new ServiceToken(configured);
    }

    /** The token, to send as {@code Authorization: Bearer <token>}. */
    public String value() {
        return new String(token, StandardCharsets.UTF_8);
    }

    /**
     * Whether {@code presented} is this token, compared in constant time.
     *
     * @param presented a token a caller presented
     * @return whether it is this one
     */
    boolean matches(final String presented) {
        return MessageDigest.isEqual(token, presented.getBytes(StandardCharsets.UTF_8));
    }
}
