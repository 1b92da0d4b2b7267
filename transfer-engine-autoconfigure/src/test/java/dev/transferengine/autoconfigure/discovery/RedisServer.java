package dev.transferengine.autoconfigure.discovery;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A real Redis for the tests: Debian's {@code redis-server} (or the one {@code REDIS_SERVER} names) on a free
 * loopback port, plain or TLS only, with a temporary directory and no persistence. Tests that need it skip, saying why, where the binary
 * is missing.
 */
final class RedisServer implements AutoCloseable {

    private static final Path BINARY = Path.of(System.getenv().getOrDefault("REDIS_SERVER", "/usr/bin/redis-server"));
    private static final Duration START = Duration.ofSeconds(60);

    private final Process process;
    private final Path dir;
    private final int port;

    private RedisServer(final Process process, final Path dir, final int port) {
        this.process = process;
        this.dir = dir;
        this.port = port;
    }

    /**
     * Starts a server and waits until it answers.
     *
     * @param config extra redis.conf lines, e.g. ACL users
     */
    static RedisServer start(final String... config) throws IOException {
        return start(false, List.of(config));
    }

    /**
     * Starts a server that speaks only TLS on its port (no plain port) and waits until it is ready.
     *
     * @param certificates the server's certificate, key and the CA that signed it
     * @param config       extra redis.conf lines, e.g. ACL users
     */
    static RedisServer startTls(final RedisCertificates certificates, final String... config) throws IOException {
        final List<String> lines = new ArrayList<>(List.of(
                "tls-cert-file " + certificates.serverCertificate(),
                "tls-key-file " + certificates.serverKey(),
                "tls-ca-cert-file " + certificates.caCertificate(),
                "tls-auth-clients no"));
        lines.addAll(List.of(config));
        return start(true, lines);
    }

    private static RedisServer start(final boolean tls, final List<String> config) throws IOException {
        assumeTrue(
                Files.isExecutable(BINARY),
                "no redis-server at " + BINARY + ": install Debian's redis-server package (.ci/run does), or set"
                        + " REDIS_SERVER to a redis-server binary");
        final Path dir = Files.createTempDirectory("te-redis-");
        final int port = freePort();
        final List<String> lines = new ArrayList<>(List.of(
                tls ? "port 0" : "port " + port,
                "bind 127.0.0.1",
                "dir " + dir,
                "save \"\"",
                "appendonly no",
                "daemonize no",
                "logfile " + dir.resolve("redis.log")));
        if (tls) {
            lines.add("tls-port " + port);
        }
        lines.addAll(config);
        final Path conf = Files.writeString(dir.resolve("redis.conf"), String.join("\n", lines) + "\n");
        final Process process = new ProcessBuilder(BINARY.toString(), conf.toString())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("stdout.log").toFile())
                .start();
        final RedisServer server = new RedisServer(process, dir, port);
        try {
            await().atMost(START).pollInterval(Duration.ofMillis(50)).until(tls ? server::ready : server::answers);
        } catch (final RuntimeException e) {
            final String log = server.log();
            server.close();
            throw new IllegalStateException("redis-server did not answer on port " + port + ":\n" + log, e);
        }
        return server;
    }

    int port() {
        return port;
    }

    /** Kills the server, as a crash would. */
    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder())
                    .forEach(path -> path.toFile().delete());
        } catch (final IOException e) {
            // a temporary directory left behind is harmless
        }
    }

    /** Whether it answers a PING (with PONG, or NOAUTH when the default user is off). */
    private boolean answers() throws IOException {
        if (!process.isAlive()) {
            throw new IllegalStateException("redis-server exited with " + process.exitValue());
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
            socket.setSoTimeout(5000);
            final OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            final InputStream in = socket.getInputStream();
            final int first = in.read();
            return first == '+' || first == '-';
        } catch (final IOException e) {
            return false;
        }
    }

    /** Whether its log says it accepts connections (a raw PING gets no answer from a TLS port). */
    private boolean ready() {
        if (!process.isAlive()) {
            throw new IllegalStateException("redis-server exited with " + process.exitValue());
        }
        return log().contains("Ready to accept connections");
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("stdout.log")) + Files.readString(dir.resolve("redis.log"));
        } catch (final IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
