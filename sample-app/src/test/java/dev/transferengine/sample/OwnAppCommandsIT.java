package dev.transferengine.sample;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.util.FileSystemUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The walk-through of an own app in two instances with discovery on Redis, as docs/spring-boot.md and the README
 * write it: every block marked {@code <!-- doc-test: own-app-... -->} runs as written in one {@link CommandSession}
 * (blocks of one id in page order, as one shell), against a real redis-server the block starts and the app of
 * docs/own-app. The app is compiled here against this module's test class path (its own dependencies, the starter,
 * WebFlux and reactive Redis, are on it) into {@code target/app.jar}, which stands for what {@code ./mvnw package}
 * makes of its pom; the build line itself is skipped like the sample's.
 */
class OwnAppCommandsIT {

    private static final Path MODULE = Path.of("").toAbsolutePath();
    private static final Path REPOSITORY = MODULE.resolve("..").normalize();
    private static final Path APP = REPOSITORY.resolve("docs/own-app");
    private static final Path WORK = MODULE.resolve("target/own-app");
    private static final Path REDIS = Path.of("/usr/bin/redis-server");
    private static final Duration LOG_WAIT = Duration.ofMinutes(1);
    private static final List<String> NOT_IN_THE_APP = List.of(
            "spring-security-",
            "spring-boot-security",
            "spring-boot-starter-security",
            "spring-boot-webclient",
            "spring-boot-starter-webclient");

    private static Path jar;

    @BeforeAll
    static void buildTheApp() throws IOException {
        assumeTrue(
                Files.isExecutable(REDIS),
                "no redis-server at " + REDIS + ": install Debian's redis-server package (.ci/run does)");
        FileSystemUtils.deleteRecursively(WORK);
        jar = build();
    }

    @Test
    void theDocumentedFilesAreTheAppsFiles() throws IOException {
        final String page = Files.readString(REPOSITORY.resolve("docs/spring-boot.md"));
        final String walkthrough =
                page.substring(page.indexOf("### Two instances of your app with discovery on Redis"));
        assertThat(fenced(walkthrough, "java"))
                .as("docs/spring-boot.md's KvPool is docs/own-app's")
                .isSubstringOf(Files.readString(APP.resolve("src/main/java/com/example/kvapp/KvPool.java")));
        assertThat(fenced(walkthrough, "yaml"))
                .as("docs/spring-boot.md's application.yml is docs/own-app's")
                .isEqualTo(Files.readString(APP.resolve("src/main/resources/application.yml")));
    }

    @Test
    void theSpringBootPageWalkThroughRunsAsWritten() throws Exception {
        final List<DocumentedBlock> blocks = blocks("docs/spring-boot.md", "own-app-walkthrough");
        assertThat(blocks).as("the walk-through's marked blocks").hasSize(4);
        try (CommandSession session = session("spring-boot")) {
            for (final DocumentedBlock block : blocks) {
                for (final String command : block.commands()) {
                    session.run(command);
                }
            }
            assertThat(session.skipped()).containsExactly("./mvnw -B -q package");
            final CommandSession.Node nodeA = session.nodes().get(0);
            final CommandSession.Node nodeB = session.nodes().get(1);
            nodeA.awaitLine(Pattern.compile("engine 'node-a' announced in the descriptor registry"), LOG_WAIT);
            nodeB.awaitLine(Pattern.compile("engine 'node-b' announced in the descriptor registry"), LOG_WAIT);
            nodeA.awaitLine(Pattern.compile("APPEARED node-b$"), LOG_WAIT);
            nodeB.awaitLine(Pattern.compile("APPEARED node-a$"), LOG_WAIT);

            assertThat(printed(session, "redis-cli --scan"))
                    .contains(
                            "transfer-engine:{node-a}:engine",
                            "transfer-engine:{node-b}:engine",
                            "transfer-engine:{node-a}:generation");
            assertThat(printed(session, "redis-cli GET"))
                    .containsPattern("(?m)^generation \\d+$")
                    .containsPattern("(?m)^address [0-9a-f]+$")
                    .containsPattern("(?m)^region \\S+ kv-pool$");
            assertThat(Long.parseLong(printed(session, "redis-cli PTTL").strip()))
                    .as("the entry's time to live")
                    .isPositive()
                    .isLessThanOrEqualTo(15_000);
            // after kill -9 %1 and the lease
            assertThat(printed(session, "redis-cli EXISTS").strip()).isEqualTo("0");
            nodeB.awaitLine(Pattern.compile("VANISHED node-a$"), LOG_WAIT);
        }
    }

    @Test
    void theReadmeTwoInstancesRunAsWritten() throws Exception {
        final List<DocumentedBlock> blocks = blocks("README.md", "own-app-redis");
        assertThat(blocks).as("the README's marked block").hasSize(1);
        try (CommandSession session = session("readme")) {
            for (final String command : blocks.getFirst().commands()) {
                session.run(command);
            }
            assertThat(session.nodes()).hasSize(2);
            session.nodes()
                    .get(1)
                    .awaitLine(Pattern.compile("engine 'node-b' announced in the descriptor registry"), LOG_WAIT);
            assertThat(printed(session, "redis-cli GET"))
                    .containsPattern("(?m)^address [0-9a-f]+$")
                    .containsPattern("(?m)^region \\S+ kv-pool$");
        }
    }

    private static List<DocumentedBlock> blocks(final String page, final String id) {
        return DocumentedBlock.of(REPOSITORY, page).stream()
                .filter(block -> block.id().equals(id))
                .toList();
    }

    private static CommandSession session(final String name) throws IOException {
        final CommandSession session = new CommandSession(WORK.resolve(name), jar);
        session.provide("target/app.jar", jar);
        return session;
    }

    /** What the one line starting with {@code start} printed. */
    private static String printed(final CommandSession session, final String start) {
        final List<CommandSession.Answer> lines = session.printed().stream()
                .filter(line -> line.command().startsWith(start))
                .toList();
        assertThat(lines).as("lines starting '%s'", start).hasSize(1);
        return lines.getFirst().body();
    }

    /** The first fenced block of {@code language} in {@code text}, without the list item's indentation. */
    private static String fenced(final String text, final String language) {
        final int open = text.indexOf("```" + language + "\n");
        final int start = text.indexOf('\n', open) + 1;
        final int end = text.lastIndexOf('\n', text.indexOf("```", start)) + 1;
        final String block = text.substring(start, end);
        final int indent = block.lines()
                .filter(line -> !line.isBlank())
                .mapToInt(line -> line.length() - line.stripLeading().length())
                .min()
                .orElse(0);
        final StringBuilder unindented = new StringBuilder();
        block.lines().forEach(line -> unindented
                .append(line.isBlank() ? "" : line.substring(indent))
                .append('\n'));
        return unindented.toString();
    }

    /**
     * Compiles docs/own-app into a jar whose manifest names its main class, this class path and native access. What
     * the app's pom does not bring is left out: this module's own classes, Spring Security and Boot's WebClient
     * module (so the app is the plain WebFlux application the page describes).
     */
    private static Path build() throws IOException {
        final List<Path> classPath = new ArrayList<>();
        for (final String entry : System.getProperty("java.class.path").split(File.pathSeparator, -1)) {
            final Path path = Path.of(entry).toAbsolutePath();
            final String name = path.getFileName().toString();
            if (!path.startsWith(MODULE) && NOT_IN_THE_APP.stream().noneMatch(name::startsWith)) {
                classPath.add(path);
            }
        }
        final Path classes = WORK.resolve("classes");
        Files.createDirectories(classes);
        final List<String> sources;
        try (Stream<Path> files = Files.walk(APP.resolve("src/main/java"))) {
            sources = files.filter(f -> f.toString().endsWith(".java"))
                    .map(Path::toString)
                    .toList();
        }
        final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        final List<String> args = new ArrayList<>(List.of(
                "--release",
                "25",
                "-d",
                classes.toString(),
                "-cp",
                String.join(
                        File.pathSeparator,
                        classPath.stream().map(Path::toString).toList())));
        args.addAll(sources);
        assertThat(javac.run(null, null, null, args.toArray(String[]::new)))
                .as("javac of docs/own-app")
                .isZero();
        final Manifest manifest = new Manifest();
        final Attributes main = manifest.getMainAttributes();
        main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        main.put(Attributes.Name.MAIN_CLASS, "com.example.kvapp.KvApp");
        main.put(
                Attributes.Name.CLASS_PATH,
                String.join(
                        " ",
                        classPath.stream().map(path -> path.toUri().toString()).toList()));
        main.put(new Attributes.Name("Enable-Native-Access"), "ALL-UNNAMED");
        final Path app = WORK.resolve("app.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(app), manifest)) {
            add(out, classes);
            add(out, APP.resolve("src/main/resources"));
        }
        return app;
    }

    /** Adds the files under {@code root} and their directories, which Spring's component scan looks up. */
    private static void add(final JarOutputStream jar, final Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (final Path file : files.filter(file -> !file.equals(root)).toList()) {
                final String name = root.relativize(file).toString();
                if (Files.isDirectory(file)) {
                    jar.putNextEntry(new JarEntry(name + "/"));
                } else {
                    jar.putNextEntry(new JarEntry(name));
                    Files.copy(file, jar);
                }
                jar.closeEntry();
            }
        }
    }
}
