package dev.transferengine.transport.tcp;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The handshake's proofs: HMAC-SHA256 with the cluster key over both nonces, both incarnations and both addresses,
 * labelled with the prover's role, so a proof is bound to one connection and cannot be replayed or reflected (see
 * {@link TcpFrame}). Up to two keys are accepted at once for rotation: this side proves itself with the first and
 * accepts a proof made with any. Without a configured key every engine uses one public key: the handshake then
 * still checks the protocol, but proves nothing. One per domain; worker thread only. Allocates only a nonce per
 * handshake.
 */
final class TcpAuthenticator {

    /** Bytes of a proof. */
    static final int PROOF_LENGTH = 32;
    /** The key every engine without a configured one uses: public, so it authenticates nothing. */
    static final String PUBLIC_KEY = "transfer-engine insecure: no cluster key configured";

    // The labels name the prover's role; their "v2" is the protocol version that introduced this handshake, not the
    // one spoken now. v3 changed only data frames (WRITEV), and every HELLO's version is checked from its header
    // before a proof is computed (another version gets an ERROR naming both), so the label need not name it. The
    // bytes stay as they are: new ones would make this release refuse every v3 peer of earlier releases with a bad
    // proof instead of talking to it.
    private static final byte[] CONNECTOR = "transfer-engine v2 connector".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ACCEPTOR = "transfer-engine v2 acceptor".getBytes(StandardCharsets.US_ASCII);

    private final Mac[] macs;
    private final boolean authenticating;
    private final SecureRandom random = new SecureRandom();
    private final byte[] proof = new byte[PROOF_LENGTH];
    private final byte[] longBytes = new byte[Long.BYTES];

    /** {@code keys}: the accepted keys, the first proving this side; empty for the public key. */
    TcpAuthenticator(final List<byte[]> keys) {
        final List<byte[]> used = keys.isEmpty() ? List.of(PUBLIC_KEY.getBytes(StandardCharsets.UTF_8)) : keys;
        this.authenticating = !keys.isEmpty();
        this.macs = new Mac[used.size()];
        try {
            for (int i = 0; i < macs.length; i++) {
                macs[i] = Mac.getInstance("HmacSHA256");
                macs[i].init(new SecretKeySpec(used.get(i), "HmacSHA256"));
            }
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    /** True if a cluster key is configured, so a checked proof means the peer holds it. */
    boolean authenticating() {
        return authenticating;
    }

    byte[] newNonce() {
        final byte[] nonce = new byte[TcpFrame.NONCE_LENGTH];
        random.nextBytes(nonce);
        return nonce;
    }

    /** This side's proof as the connector or the acceptor ({@code acceptor}) of a connection. */
    byte[] prove(final boolean acceptor, final Handshake handshake) {
        final byte[] result = new byte[PROOF_LENGTH];
        compute(macs[0], acceptor, handshake, result);
        return result;
    }

    /** True if {@code candidate} is the other side's proof under any accepted key. Constant time per key. */
    boolean verify(final boolean acceptor, final Handshake handshake, final byte[] candidate) {
        boolean valid = false;
        for (final Mac mac : macs) {
            compute(mac, acceptor, handshake, proof);
            valid |= MessageDigest.isEqual(proof, candidate);
        }
        return valid;
    }

    private void compute(final Mac mac, final boolean acceptor, final Handshake handshake, final byte[] into) {
        mac.update(acceptor ? ACCEPTOR : CONNECTOR);
        mac.update(handshake.connectorNonce());
        mac.update(handshake.acceptorNonce());
        update(mac, handshake.connectorIncarnation());
        update(mac, handshake.acceptorIncarnation());
        mac.update(handshake.connectorAddress());
        mac.update(handshake.acceptorAddress());
        try {
            mac.doFinal(into, 0);
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("a 32-byte array holds an HMAC-SHA256", e);
        }
    }

    private void update(final Mac mac, final long value) {
        for (int i = 0; i < Long.BYTES; i++) {
            longBytes[i] = (byte) (value >>> (8 * i));
        }
        mac.update(longBytes);
    }

    /** What both sides of one connection said in its handshake. */
    @SuppressWarnings("ArrayRecordComponent") // only read field by field into the MAC: never compared nor hashed
    record Handshake(
            byte[] connectorNonce,
            long connectorIncarnation,
            byte[] connectorAddress,
            byte[] acceptorNonce,
            long acceptorIncarnation,
            byte[] acceptorAddress) {}
}
