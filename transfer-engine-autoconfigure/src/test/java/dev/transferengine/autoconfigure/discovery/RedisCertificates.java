package dev.transferengine.autoconfigure.discovery;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A certificate authority and a Redis server certificate it signed (for {@code localhost} and {@code 127.0.0.1}),
 * made with the JDK's {@code keytool} and written as the PEM files redis-server and a Spring Boot PEM SSL bundle
 * read.
 *
 * @param caCertificate     the CA's certificate
 * @param serverCertificate the server's certificate
 * @param serverKey         the server's private key, unencrypted PKCS#8
 */
record RedisCertificates(Path caCertificate, Path serverCertificate, Path serverKey) {

    private static final String PASSWORD = "redis-test-store";

    /**
     * Makes a new CA and server certificate.
     *
     * @param dir where the files go
     * @param ca  the CA's name; another name is another CA, which does not sign this one's server
     * @return the files
     */
    static RedisCertificates make(final Path dir, final String ca) throws IOException, GeneralSecurityException {
        Files.createDirectories(dir);
        final Path caStore = dir.resolve(ca + ".p12");
        final Path serverStore = dir.resolve("redis.p12");
        final Path request = dir.resolve("redis.csr");
        final RedisCertificates files =
                new RedisCertificates(dir.resolve(ca + ".crt"), dir.resolve("redis.crt"), dir.resolve("redis.key"));
        keytool("-genkeypair", "-alias", "ca", "-dname", "CN=" + ca, "-ext", "bc:c", "-keystore", caStore.toString());
        keytool(
                "-exportcert",
                "-rfc",
                "-alias",
                "ca",
                "-file",
                files.caCertificate.toString(),
                "-keystore",
                caStore.toString());
        keytool("-genkeypair", "-alias", "redis", "-dname", "CN=localhost", "-keystore", serverStore.toString());
        keytool("-certreq", "-alias", "redis", "-file", request.toString(), "-keystore", serverStore.toString());
        keytool(
                "-gencert",
                "-rfc",
                "-alias",
                "ca",
                "-infile",
                request.toString(),
                "-outfile",
                files.serverCertificate.toString(),
                "-ext",
                "san=dns:localhost,ip:127.0.0.1",
                "-keystore",
                caStore.toString());
        final KeyStore server = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(serverStore)) {
            server.load(in, PASSWORD.toCharArray());
        }
        final Key key = server.getKey("redis", PASSWORD.toCharArray());
        Files.writeString(
                files.serverKey,
                "-----BEGIN PRIVATE KEY-----\n"
                        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                                .encodeToString(key.getEncoded())
                        + "\n-----END PRIVATE KEY-----\n");
        return files;
    }

    private static void keytool(final String... args) throws IOException {
        final List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
        command.addAll(List.of(args));
        if (args[0].equals("-genkeypair")) {
            command.addAll(List.of("-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2"));
        }
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD, "-keypass", PASSWORD));
        final Process process =
                new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IOException("keytool " + String.join(" ", args) + " failed: " + output);
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while keytool ran", e);
        }
    }
}
