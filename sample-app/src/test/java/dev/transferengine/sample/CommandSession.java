package dev.transferengine.sample;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Runs the commands of one {@link DocumentedBlock} on this machine as a user would on several: {@code java -jar}
 * lines start a node in the background, every other line runs in bash, and what a line exports is the environment of
 * the next. Only what one machine cannot reproduce is rewritten ({@link #localize}).
 */
final class CommandSession implements AutoCloseable {

    /** The documented JDK path; a machine whose JDK 25 lives elsewhere gets its own. */
    private static final String DOCUMENTED_JDK = "/usr/lib/jvm/temurin-25-jdk-amd64";

    private static final Duration START = Duration.ofMinutes(3);
    private static final Duration COMMAND = Duration.ofMinutes(3);
    private static final Pattern BUILD = Pattern.compile("^(JAVA_HOME=\\S+ )?\\./mvnw\\b.*");
    private static final Pattern OPTION = Pattern.compile("--([a-z.-]+)=(\\S+)");
    private static final Pattern SERVER_PORT = Pattern.compile("--server\\.port=(\\d+)");
    /** {@code java -jar}, {@code /path/bin/java -jar}, {@code "$JAVA_HOME/bin/java" -jar}. */
    private static final Pattern JAVA_JAR = Pattern.compile("^\\S*\\bjava\"? -jar ");

    private static final Pattern KILL = Pattern.compile("^kill( -9)? %(\\d+)$");
    private static final Pattern STARTED = Pattern.compile("\\bStarted \\w+ in ");
    private static final String DOCUMENTED_REDIS_PORT = "6379";
    private static final List<String> FOREIGN = List.of(
            "SAMPLE_",
            "TRANSFER_ENGINE_",
            "TRANSFERENGINE_",
            "SERVER_",
            "SPRING_",
            "JAVA_TOOL_OPTIONS",
            "JDK_JAVA_OPTIONS",
            "_JAVA_OPTIONS");

    private final Path dir;
    private final Map<String, String> environment = new HashMap<>();
    private final int httpPort;
    private final int basePort;
    private final int redisPort;
    private final Map<String, Integer> serverPorts = new HashMap<>();
    private final List<Node> nodes = new ArrayList<>();
    private final List<Answer> answers = new ArrayList<>();
    private final List<Answer> printed = new ArrayList<>();
    private final List<String> skipped = new ArrayList<>();
    private int commands;

    /**
     * An answer to a documented {@code curl}.
     *
     * @param command the command as run
     * @param status  its HTTP status, or -1 for a pipeline (whose output is {@code body})
     * @param body    what it printed
     */
    record Answer(String command, int status, String body) {}

    /**
     * @param dir a fresh working directory; {@code sample-app.jar} and {@code sample-app/target/sample-app.jar} in
     *            it are the jar under test
     * @param jar the jar under test
     */
    CommandSession(final Path dir, final Path jar) throws IOException {
        this.dir = dir;
        Files.createDirectories(dir.resolve("sample-app/target"));
        Files.createSymbolicLink(dir.resolve("sample-app.jar"), jar.toAbsolutePath());
        Files.createSymbolicLink(dir.resolve("sample-app/target/sample-app.jar"), jar.toAbsolutePath());
        System.getenv().forEach((key, value) -> {
            if (FOREIGN.stream().noneMatch(key::startsWith)) {
                environment.put(key, value);
            }
        });
        // the documented machines' `java` is a Java 25
        environment.put(
                "PATH",
                Path.of(System.getProperty("java.home"), "bin") + ":" + environment.getOrDefault("PATH", "/usr/bin"));
        this.httpPort = freePort(1);
        this.basePort = freePort(4);
        this.redisPort = freePort(1);
    }

    /**
     * Puts a file where the documented commands expect it, e.g. the jar {@code java -jar target/app.jar} starts.
     *
     * @param documented the path the commands use, relative to the working directory
     * @param file       the file it links to
     */
    void provide(final String documented, final Path file) throws IOException {
        final Path link = dir.resolve(documented);
        Files.createDirectories(link.getParent());
        Files.createSymbolicLink(link, file.toAbsolutePath());
    }

    /**
     * The documented line as one machine runs it: the addresses {@code 10.0.0.N} become {@code 127.0.1.N} (all of
     * 127.0.0.0/8 is loopback on Linux), the HTTP port 8080, each {@code --server.port} (and URLs naming it), the engine base port 7400
     * and Redis' port 6379 (for {@code redis-server} and {@code redis-cli}) become free ports, the documented JDK path
     * this JVM's.
     */
    String localize(final String documented) throws IOException {
        final Matcher serverPort = SERVER_PORT.matcher(documented);
        final StringBuilder line = new StringBuilder();
        while (serverPort.find()) {
            final int port = serverPort(serverPort.group(1));
            serverPort.appendReplacement(line, "--server.port=" + port);
        }
        serverPort.appendTail(line);
        String localized = line.toString();
        for (final Map.Entry<String, Integer> port : serverPorts.entrySet()) {
            // a URL to a node started earlier with that --server.port
            localized = localized.replaceAll(":" + port.getKey() + "\\b", ":" + port.getValue());
        }
        return localized
                .replace("10.0.0.", "127.0.1.")
                .replaceAll(":8080\\b", ":" + httpPort)
                .replace("base-port=7400", "base-port=" + basePort)
                .replaceAll("^redis-server --port " + DOCUMENTED_REDIS_PORT + "\\b", "redis-server --port " + redisPort)
                .replaceAll("^redis-cli ", "redis-cli -p " + redisPort + " ")
                .replace(DOCUMENTED_JDK, System.getProperty("java.home"));
    }

    private int serverPort(final String documented) throws IOException {
        final Integer known = serverPorts.get(documented);
        if (known != null) {
            return known;
        }
        final int port = freePort(1);
        serverPorts.put(documented, port);
        return port;
    }

    /**
     * Runs one documented command line.
     *
     * @param documented the line as documented
     */
    void run(final String documented) throws IOException, InterruptedException {
        final String line = localize(documented);
        final List<String> parts = new ArrayList<>();
        final int and = line.indexOf(" && ");
        final String first = and < 0 ? line : line.substring(0, and);
        if (BUILD.matcher(first).matches()) {
            // `./mvnw ...` (and `./mvnw ... && java -jar ...`): the build made the jar under test; the rest runs
            skipped.add(first);
            if (and >= 0) {
                parts.add(line.substring(and + 4));
            }
        } else {
            parts.add(line);
        }
        for (final String part : parts) {
            // a trailing comment and '&' (one shell's background job) say nothing a node started here needs
            final String job = part.replaceFirst("\\s+#[^'\"]*$", "").replaceFirst("\\s*&$", "");
            final Matcher kill = KILL.matcher(job);
            if (JAVA_JAR.matcher(job).find()) {
                final Node node = Node.start(job, dir, nodeEnvironment(), dir.resolve("node-" + nodes.size() + ".log"));
                nodes.add(node);
                node.awaitStarted(START);
            } else if (kill.matches()) {
                // `kill %N` is the shell's job N: the N-th node started
                final Node node = nodes.get(Integer.parseInt(kill.group(2)) - 1);
                if (kill.group(1) == null) {
                    node.stop();
                } else {
                    node.kill();
                }
            } else if (part.startsWith("curl ")) {
                answers.add(curl(part));
            } else {
                // recorded as documented, so a test finds `redis-cli GET ...` whatever port it ran with
                printed.add(new Answer(parts.size() == 1 ? documented : part, -1, shell(part)));
            }
        }
    }

    /** The nodes started so far, in order. */
    List<Node> nodes() {
        return nodes;
    }

    /** The answers to the documented {@code curl} lines, in order. */
    List<Answer> answers() {
        return answers;
    }

    /**
     * What each line that ran in bash (neither a node, a {@code kill} nor a {@code curl}) printed, in order, with the
     * line as documented.
     */
    List<Answer> printed() {
        return printed;
    }

    /** The build lines left out. */
    List<String> skipped() {
        return skipped;
    }

    /** The value of an environment variable the block exported, or null. */
    @Nullable String exported(final String name) {
        return environment.get(name);
    }

    /** The HTTP port the nodes listen on. */
    int httpPort() {
        return httpPort;
    }

    /** The working directory. */
    Path dir() {
        return dir;
    }

    private Map<String, String> nodeEnvironment() {
        final Map<String, String> nodeEnvironment = new HashMap<>(environment);
        // the documented port 8080 is Spring Boot's default; this machine's nodes take a free one
        nodeEnvironment.put("SERVER_PORT", Integer.toString(httpPort));
        // the documented Redis port 6379 is the one an application.yml names; the nodes use this session's Redis
        nodeEnvironment.put("SPRING_DATA_REDIS_PORT", Integer.toString(redisPort));
        return nodeEnvironment;
    }

    private Answer curl(final String command) throws IOException, InterruptedException {
        if (command.contains("|")) {
            final String output = shell(command);
            return new Answer(command, -1, output);
        }
        final String output = shell(command.replaceFirst("^curl ", "curl --write-out '\\\\n%{http_code}' "));
        final int newline = output.lastIndexOf('\n');
        final String status = output.substring(newline + 1).strip();
        return new Answer(command, Integer.parseInt(status), newline < 0 ? "" : output.substring(0, newline));
    }

    /** Runs {@code command} in bash with the session's environment, takes over what it exports, returns its output. */
    private String shell(final String command) throws IOException, InterruptedException {
        final int n = commands++;
        final Path output = dir.resolve("command-" + n + ".out");
        final Path exported = dir.resolve("command-" + n + ".env");
        final String script = command + "\nstatus=$?\nenv -0 > '" + exported + "'\nexit $status\n";
        final ProcessBuilder builder = new ProcessBuilder("bash", "-c", script)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(output.toFile());
        builder.environment().clear();
        builder.environment().putAll(environment);
        final Process process = builder.start();
        if (!process.waitFor(COMMAND.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(
                    "'" + command + "' did not end within " + COMMAND + ":\n" + Files.readString(output));
        }
        final String printed = Files.readString(output);
        if (process.exitValue() != 0) {
            throw new AssertionError("'" + command + "' exited with " + process.exitValue() + ":\n" + printed);
        }
        for (final String entry : Files.readString(exported).split("\0", -1)) {
            final int equals = entry.indexOf('=');
            final String key = equals < 0 ? "" : entry.substring(0, equals);
            if (!key.isEmpty()
                    && !List.of("_", "SHLVL", "PWD", "OLDPWD", "status").contains(key)) {
                environment.put(key, entry.substring(equals + 1));
            }
        }
        return printed;
    }

    /** A port free on every loopback address the documented machines become, with {@code span} ports above it. */
    private static int freePort(final int span) throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            // below Linux's ephemeral range (32768 and up), where engines and outbound connections take ports
            final int port = ThreadLocalRandom.current().nextInt(20_000, 32_768 - span);
            if (freeEverywhere(port, span)) {
                return port;
            }
        }
        throw new IOException("no free port range found on 127.0.0.1 and 127.0.1.1-9");
    }

    private static boolean freeEverywhere(final int port, final int span) throws IOException {
        for (int host = 0; host < 10; host++) {
            final InetAddress address = InetAddress.getByName(host == 0 ? "127.0.0.1" : "127.0.1." + host);
            for (int p = port; p < port + span; p++) {
                try (ServerSocket socket = new ServerSocket()) {
                    socket.bind(new InetSocketAddress(address, p));
                } catch (final IOException busy) {
                    return false;
                }
            }
        }
        return true;
    }

    @Override
    public void close() throws IOException {
        for (final Node node : nodes) {
            node.stop();
        }
        if (printed.stream().anyMatch(line -> line.command().startsWith("redis-server "))) {
            // the documented Redis daemonized itself: no process of ours to stop
            try {
                shell("redis-cli -p " + redisPort + " shutdown nosave || true");
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A node a documented {@code java -jar} line started. */
    static final class Node {

        private final String command;
        private final Process process;
        private final List<String> lines = new CopyOnWriteArrayList<>();
        private final CompletableFuture<Void> started = new CompletableFuture<>();

        private Node(final String command, final Process process) {
            this.command = command;
            this.process = process;
        }

        static Node start(final String command, final Path dir, final Map<String, String> environment, final Path log)
                throws IOException {
            final ProcessBuilder builder = new ProcessBuilder("bash", "-c", "exec " + command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true);
            builder.environment().clear();
            builder.environment().putAll(environment);
            final Node node = new Node(command, builder.start());
            final Thread reader = new Thread(() -> node.read(log), "doc-node-" + log.getFileName());
            reader.setDaemon(true);
            reader.start();
            return node;
        }

        private void read(final Path log) {
            try (BufferedReader reader = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
                    var out = Files.newBufferedWriter(log)) {
                String line;
                while ((line = reader.readLine()) != null) {
                    lines.add(line);
                    out.write(line);
                    out.newLine();
                    out.flush();
                    if (STARTED.matcher(line).find()) {
                        started.complete(null);
                    }
                }
            } catch (final IOException e) {
                started.completeExceptionally(new UncheckedIOException(e));
            }
            final String cause = lines.stream()
                    .filter(l -> l.startsWith("Caused by:"))
                    .reduce((first, last) -> last)
                    .orElse("");
            started.completeExceptionally(
                    new AssertionError("'" + command + "' ended before it started; " + cause + "\n" + log()));
        }

        void awaitStarted(final Duration timeout) throws InterruptedException {
            try {
                started.get(timeout.toSeconds(), TimeUnit.SECONDS);
            } catch (final ExecutionException e) {
                if (e.getCause() instanceof AssertionError ended) {
                    throw ended;
                }
                throw new AssertionError("'" + command + "' did not start", e.getCause());
            } catch (final TimeoutException e) {
                throw new AssertionError("'" + command + "' did not start within " + timeout + ":\n" + log(), e);
            }
        }

        /** The command as run. */
        String command() {
            return command;
        }

        /** The value of {@code --name=value} on its command line, or {@code fallback}. */
        String option(final String name, final String fallback) {
            final Matcher option = OPTION.matcher(command);
            while (option.find()) {
                if (option.group(1).equals(name)) {
                    return option.group(2);
                }
            }
            return fallback;
        }

        /** What it printed so far. */
        String log() {
            return String.join("\n", lines);
        }

        /** The first line it printed that contains {@code text}, or null. */
        @Nullable String line(final String text) {
            return lines.stream().filter(l -> l.contains(text)).findFirst().orElse(null);
        }

        /** SIGKILL: the node dies without shutting down, as {@code kill -9} makes it. */
        void kill() throws InterruptedException {
            process.destroyForcibly();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                throw new AssertionError("'" + command + "' still runs a minute after SIGKILL");
            }
        }

        /** The first line it printed that matches {@code pattern}, waiting for it up to {@code timeout}. */
        String awaitLine(final Pattern pattern, final Duration timeout) throws InterruptedException {
            final long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                for (final String line : lines) {
                    if (pattern.matcher(line).find()) {
                        return line;
                    }
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("'" + command + "' printed no line matching '" + pattern + "' within "
                            + timeout + ":\n" + log());
                }
                Thread.sleep(100);
            }
        }

        /** SIGTERM (Spring closes the engine), then SIGKILL if it is still there a minute later. */
        void stop() {
            process.destroy();
            try {
                if (!process.waitFor(60, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (final InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
