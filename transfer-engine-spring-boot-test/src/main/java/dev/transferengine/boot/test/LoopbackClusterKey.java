package dev.transferengine.boot.test;

import java.security.SecureRandom;
import java.util.Base64;

/**
 * The cluster key the loopback engine pair shares: 32 fresh random bytes per application context, so a test's
 * engines accept each other and nothing else on the machine (another test's engines included).
 *
 * @param base64 the key in base64, as {@code tcp.clusterKey} takes it
 */
public record LoopbackClusterKey(String base64) {

    private static final int KEY_BYTES = 32;

    /**
     * A new random key.
     *
     * @return the key, from {@link SecureRandom}
     */
    public static LoopbackClusterKey generate() {
        final byte[] key = new byte[KEY_BYTES];
        new SecureRandom().nextBytes(key);
        return new LoopbackClusterKey(Base64.getEncoder().encodeToString(key));
    }

    /** Never prints the key: it is a secret even in a test. */
    @Override
    public String toString() {
        return "LoopbackClusterKey[" + KEY_BYTES + " random bytes]";
    }
}
