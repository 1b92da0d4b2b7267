package dev.transferengine.transport.tcp;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;

/**
 * One direction of a connection's engine records ({@link TcpRecords}): AES-GCM with a key and a nonce salt exported
 * from the TLS session (RFC 8446 section 7.5), one label per direction, so the two directions never share a key. The
 * nonce is the salt XOR the record's 64-bit sequence number, as in TLS 1.3: the sender and the receiver count records
 * alike, so a record replayed, reordered, dropped or sent the other way fails its tag. A key seals at most
 * {@value #BYTES_PER_KEY} plaintext bytes (TLS 1.3 allows about 2^38 for AES-GCM, RFC 8446 section 5.5); the record
 * that would pass that is sealed under the next generation's key and salt, exported with the generation as context,
 * which both sides reach at the same record. The AES key is as long as the TLS suite's (16 bytes under
 * TLS_AES_128_GCM_SHA256, else 32).
 *
 * <p>Sealing encrypts in place; opening decrypts into another buffer: the JDK's AES-GCM writes plaintext into its
 * output before it checks the tag (and zeroes it after a mismatch), so a destination must never be the region a
 * record lands in. One thread only (the connection's socket thread). Allocates nothing of its own per record; the
 * JCE's {@code Cipher.init} allocates its parameter objects.
 */
final class TcpRecordCipher {

    /** Plaintext bytes one key seals at most: 2^36 (64 GiB). */
    static final long BYTES_PER_KEY = 1L << 36;

    private static final String CLIENT_LABEL = "EXPORTER-transfer-engine-records client";
    private static final String SERVER_LABEL = "EXPORTER-transfer-engine-records server";
    private static final String SALT = " salt";
    private static final int NONCE = 12;
    private static final int TAG_BITS = TcpRecords.TAG * 8;

    private final ExtendedSSLSession session;
    private final String label;
    private final int keyBytes;
    private final long bytesPerKey;
    private final Cipher cipher;
    private final byte[] salt = new byte[NONCE];
    private final byte[] nonce = new byte[NONCE];
    private final byte[] generationContext = new byte[Long.BYTES];

    private SecretKey key;
    private long generation;
    private long sequence;
    private long bytesUnderKey;

    /**
     * The cipher of the direction {@code engine}'s side sends ({@code sending}) or receives, after its TLS handshake.
     *
     * @throws SSLException if the session cannot export keys or AES-GCM is missing
     */
    static TcpRecordCipher of(final SSLEngine engine, final boolean sending) throws SSLException {
        WarmUp.started();
        return new TcpRecordCipher(engine, sending == engine.getUseClientMode(), BYTES_PER_KEY);
    }

    TcpRecordCipher(final SSLEngine engine, final boolean clientToServer, final long bytesPerKey) throws SSLException {
        if (!(engine.getSession() instanceof ExtendedSSLSession extended)) {
            throw new SSLException("the TLS session cannot export keys for engine records");
        }
        this.session = extended;
        this.label = clientToServer ? CLIENT_LABEL : SERVER_LABEL;
        this.keyBytes = "TLS_AES_128_GCM_SHA256".equals(extended.getCipherSuite()) ? 16 : 32;
        this.bytesPerKey = bytesPerKey;
        try {
            this.cipher = Cipher.getInstance("AES/GCM/NoPadding");
        } catch (final GeneralSecurityException e) {
            throw new SSLException("AES-GCM is not available for engine records", e);
        }
        this.key = export();
    }

    /**
     * Seals the record at {@code offset} of {@code array} in place: its header (type and the protected length) and
     * {@code plaintext} bytes after it, room for the tag after them.
     *
     * @throws SSLException if the keys ran out (2^64 records) or the JCE failed
     */
    void seal(final byte[] array, final int offset, final int plaintext) throws SSLException {
        next(plaintext);
        try {
            cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(array, offset, TcpRecords.HEADER);
            final int at = offset + TcpRecords.HEADER;
            cipher.doFinal(array, at, plaintext, array, at);
        } catch (final GeneralSecurityException e) {
            throw new SSLException("sealing an engine record failed", e);
        }
    }

    /**
     * Opens the sealed record at {@code offset} of {@code sealed} ({@code protectedLength} bytes after its header)
     * into {@code plain} at {@code plainOffset}, which must not share its array.
     *
     * @return the plaintext's length
     * @throws SSLException naming the cause: {@link AEADBadTagException} for a record that does not authenticate
     */
    int open(
            final ByteBuffer sealed,
            final int offset,
            final int protectedLength,
            final ByteBuffer plain,
            final int plainOffset)
            throws SSLException {
        final int plaintext = protectedLength - TcpRecords.TAG;
        if (plaintext < 0) {
            throw new SSLException("an engine record of " + protectedLength + " bytes has no room for its tag");
        }
        next(plaintext);
        try {
            cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
            final byte[] in = sealed.array();
            final int base = sealed.arrayOffset() + offset;
            cipher.updateAAD(in, base, TcpRecords.HEADER);
            return cipher.doFinal(
                    in, base + TcpRecords.HEADER, protectedLength, plain.array(), plain.arrayOffset() + plainOffset);
        } catch (final AEADBadTagException e) {
            throw new SSLException(
                    "an engine record failed its authentication (record " + (sequence - 1)
                            + " of the direction; tampered, replayed, reordered or cut)",
                    e);
        } catch (final GeneralSecurityException e) {
            throw new SSLException("opening an engine record failed", e);
        }
    }

    /** The generation of the current key: 0 until the first {@value #BYTES_PER_KEY} bytes. */
    long generation() {
        return generation;
    }

    /** The nonce of the next record, moving to the next key first if this record would pass the limit. */
    private void next(final int plaintext) throws SSLException {
        if (bytesUnderKey + plaintext > bytesPerKey) {
            generation++;
            bytesUnderKey = 0;
            key = export();
        }
        if (sequence == -1L) {
            throw new SSLException("2^64 engine records on one connection: reconnect");
        }
        bytesUnderKey += plaintext;
        final long number = sequence++;
        for (int i = 0; i < NONCE; i++) {
            final long part = i < NONCE - Long.BYTES ? 0 : number >>> (8 * (NONCE - 1 - i));
            nonce[i] = (byte) (salt[i] ^ part);
        }
    }

    /** The key and salt of {@link #generation}; sets {@link #salt}. */
    private SecretKey export() throws SSLException {
        ByteBuffer.wrap(generationContext).putLong(0, generation);
        try {
            final SecretKey exported = session.exportKeyingMaterialKey("AES", label, generationContext, keyBytes);
            final byte[] material = session.exportKeyingMaterialData(label + SALT, generationContext, NONCE);
            System.arraycopy(material, 0, salt, 0, NONCE);
            return exported;
        } catch (final RuntimeException e) {
            throw new SSLException("the TLS session cannot export keys for engine records: " + e, e);
        }
    }

    /**
     * Has the JIT compile the JCE's AES-GCM before large records need it, once per JVM, on a daemon thread of its own
     * (started by the first connection with engine records). Measured (2-core VM): AES-GCM stays in interpreted and
     * C1 code until its inner method has been called some thousands of times, which records of 256 KiB take minutes
     * to reach (0.01 GB/s after 8 s; 16 KiB records, as JSSE's, 4 s); 10,000 records of 768 bytes (the least the
     * combined intrinsic takes), sealed and opened, took 0.9 s, and 256 KiB records ran at full speed right after.
     */
    private static final class WarmUp {

        private static final int RECORDS = 10_000;
        private static final int SIZE = 768;

        static {
            final Thread thread = TcpThreads.FACTORY.newThread(WarmUp::run);
            thread.setName("te-tls-warmup");
            thread.setDaemon(true);
            thread.start();
        }

        private WarmUp() {}

        /** Starts the warm-up unless it started before. */
        static void started() {
            // Loading this class started it.
        }

        private static void run() {
            try {
                final Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
                final SecretKeySpec key = new SecretKeySpec(new byte[16], "AES");
                final byte[] sealed = new byte[SIZE + TcpRecords.TAG];
                final byte[] opened = new byte[SIZE + TcpRecords.TAG];
                final byte[] nonce = new byte[NONCE];
                for (int record = 0; record < RECORDS; record++) {
                    ByteBuffer.wrap(nonce).putInt(NONCE - Integer.BYTES, record);
                    cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
                    cipher.doFinal(sealed, 0, SIZE, sealed, 0);
                    cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
                    cipher.doFinal(sealed, 0, SIZE + TcpRecords.TAG, opened, 0);
                }
            } catch (final GeneralSecurityException e) {
                // Only speed is lost: records then warm the JIT up themselves.
            }
        }
    }
}
