package dev.transferengine.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * A {@code te-bench serve} child JVM started with this JVM's own java binary and class path. Its stderr goes to ours;
 * its first {@link PeerLine} on stdout says where it serves, and a {@code te-huge-pages} line before it how much of its
 * region huge pages back. Closing it closes the child's stdin, its stop signal.
 * The child gets this JVM's {@code -D} system properties, so that a property set for an experiment changes both
 * sides of the measurement ({@code JAVA_TOOL_OPTIONS} reaches the child by itself and is not passed twice).
 */
final class PeerProcess implements AutoCloseable {

    private static final Duration EXIT_WAIT = Duration.ofSeconds(10);

    private final Process process;
    private final PeerLine line;
    private final @Nullable Long hugePageBytes;

    private PeerProcess(final Process process, final PeerLine line, final @Nullable Long hugePageBytes) {
        this.process = process;
        this.line = line;
        this.hugePageBytes = hugePageBytes;
    }

    /** Starts {@code te-bench serve} with {@code serveArgs} and blocks until it printed its peer line. */
    static PeerProcess start(final List<String> serveArgs) throws IOException {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current()
                .info()
                .command()
                .orElseThrow(() -> new IOException("cannot tell which java binary runs this JVM")));
        command.add("--enable-native-access=ALL-UNNAMED");
        command.addAll(systemProperties());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(TeBench.class.getName());
        command.add("serve");
        command.addAll(serveArgs);
        final Process process = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        final BufferedReader out =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        Long hugePageBytes = null;
        String text;
        while ((text = out.readLine()) != null) {
            if (text.startsWith(ServeCommand.HUGE_PAGES_PREFIX + " ")) {
                hugePageBytes = Long.parseLong(
                        text.substring(ServeCommand.HUGE_PAGES_PREFIX.length()).strip());
            } else if (PeerLine.matches(text)) {
                // the child prints nothing more on stdout; an unread pipe cannot fill up
                return new PeerProcess(process, PeerLine.parse(text), hugePageBytes);
            }
        }
        process.destroyForcibly();
        throw new IOException("te-bench serve exited ("
                + process.onExit().join().exitValue() + ") before printing its peer line; see its stderr above");
    }

    /** The {@code -D} options of this JVM's command line, without those that came from {@code JAVA_TOOL_OPTIONS}. */
    static List<String> systemProperties() {
        final String toolOptions = System.getenv("JAVA_TOOL_OPTIONS");
        final Set<String> inherited = toolOptions == null
                ? Set.of()
                : Set.copyOf(Arrays.asList(toolOptions.trim().split("\\s+")));
        return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(argument -> argument.startsWith("-D") && !inherited.contains(argument))
                .toList();
    }

    PeerLine line() {
        return line;
    }

    /** The bytes of the child's region that huge pages back, where it was started with {@code --huge-pages}. */
    @Nullable Long hugePageBytes() {
        return hugePageBytes;
    }

    @Override
    public void close() throws IOException {
        process.getOutputStream().close();
        try {
            if (!process.waitFor(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (final InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
