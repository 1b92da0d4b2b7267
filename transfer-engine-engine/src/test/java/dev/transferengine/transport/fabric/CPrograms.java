package dev.transferengine.transport.fabric;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Builds and runs the C programs under {@code src/test/c} that check the binding against libfabric itself. */
final class CPrograms {

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

    /** Runs {@code command} in {@code dir}, asserts it exits 0 within a minute, and returns its output, stripped. */
    static String run(final List<String> command, final Path dir) throws IOException, InterruptedException {
        final Process process = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS))
                .as("%s finished", command)
                .isTrue();
        assertThat(process.exitValue())
                .as("%s exit status; output:%n%s", command, output)
                .isZero();
        return output.strip();
    }
}
