package dev.transferengine.test;

import dev.transferengine.TransportTls;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Self-signed identities made once per test JVM with the JDK's {@code keytool}: {@code node}, which every
 * {@link #trusted()} engine presents and trusts, and {@code stranger}, which nobody trusts.
 */
public final class TlsFixture {

    /** The password of every key store this fixture writes. */
    public static final String PASSWORD = "test-store-pass";

    private static final Path DIR = makeDir();
    private static final Path NODE = generate("node");
    private static final Path STRANGER = generate("stranger");

    private TlsFixture() {}

    /**
     * Mutual TLS as a member of the cluster: presents and trusts {@code node}.
     *
     * @return the TLS settings
     */
    public static TransportTls trusted() {
        return TransportTls.mutual(context(NODE, NODE));
    }

    /**
     * Presents {@code stranger}, which members do not trust, and trusts {@code node}.
     *
     * @return the TLS settings
     */
    public static TransportTls stranger() {
        return TransportTls.mutual(context(STRANGER, NODE));
    }

    /**
     * Mutual TLS that presents and trusts the identity in {@code keyStore} (PKCS12, password {@link #PASSWORD}): how
     * a child JVM joins this JVM's cluster, given {@link #nodeKeyStore()}.
     *
     * @param keyStore the PKCS12 file
     * @return the TLS settings
     */
    public static TransportTls trustedFrom(final Path keyStore) {
        return TransportTls.mutual(context(keyStore, keyStore));
    }

    /**
     * The PKCS12 key store of {@code node} (password {@link #PASSWORD}).
     *
     * @return its path
     */
    public static Path nodeKeyStore() {
        return NODE;
    }

    private static SSLContext context(final Path identity, final Path trusted) {
        try {
            final KeyStore keys = load(identity);
            final KeyManagerFactory keyManagers =
                    KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keyManagers.init(keys, PASSWORD.toCharArray());
            final KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            final KeyStore trustedKeys = load(trusted);
            trust.setCertificateEntry(
                    "trusted", trustedKeys.getCertificate(trustedKeys.aliases().nextElement()));
            final TrustManagerFactory trustManagers =
                    TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trustManagers.init(trust);
            final SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers.getKeyManagers(), trustManagers.getTrustManagers(), null);
            return context;
        } catch (final GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot build the test TLS context", e);
        }
    }

    private static KeyStore load(final Path path) throws GeneralSecurityException, IOException {
        final KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(path)) {
            store.load(in, PASSWORD.toCharArray());
        }
        return store;
    }

    private static Path makeDir() {
        try {
            final Path dir = Files.createTempDirectory("te-tls");
            dir.toFile().deleteOnExit();
            return dir;
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path generate(final String name) {
        final Path store = DIR.resolve(name + ".p12");
        final Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        final List<String> command = List.of(
                keytool.toString(),
                "-genkeypair",
                "-alias",
                name,
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=" + name,
                "-validity",
                "30",
                "-storetype",
                "PKCS12",
                "-keystore",
                store.toString(),
                "-storepass",
                PASSWORD,
                "-keypass",
                PASSWORD);
        try {
            final Process process =
                    new ProcessBuilder(command).redirectErrorStream(true).start();
            final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException("keytool failed for " + name + ": " + output);
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        store.toFile().deleteOnExit();
        return store;
    }
}
