package dev.transferengine.transport.fabric;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Builds and runs the C programs under {@code src/test/c} that check the binding against libfabric itself. */
final class CPrograms {

    /** How long a program (a compiler, a check) may run: generous, as a loaded 2-core CI machine is slow. */
    private static final Duration RUN_WAIT = Duration.ofSeconds(60);
    /** More lines than any of the programs prints: a program that floods its output fails instead. */
    private static final int MAX_LINES = 10_000;

    private CPrograms() {}

    /** Whether {@code command} is an executable in a directory of the PATH. */
    static boolean onPath(final String command) {
        for (final String directory : System.getenv().getOrDefault("PATH", "").split(":", -1)) {
            if (!directory.isEmpty() && Files.isExecutable(Path.of(directory, command))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Runs {@code command} in {@code dir}, asserts its output ends within {@link #RUN_WAIT} (read with a deadline, so
     * a stuck program fails the test instead of hanging it) and that it exits 0, and returns its output, stripped.
     */
    static String run(final List<String> command, final Path dir) throws IOException, InterruptedException {
        try (ChildJvm child = ChildJvm.start(
                new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true))) {
            final String output = String.join("\n", child.awaitOutput(RUN_WAIT, MAX_LINES));
            assertThat(child.exitStatus())
                    .as("%s exit status; output:%n%s", command, output)
                    .isEqualTo("0");
            return output.strip();
        }
    }
}
