package dev.transferengine.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The C anchors of {@code src/main/c} for their tests: compiled as {@code bundle-h200.sh} compiles them (warnings as
 * errors) and run with a bound on their time, generous since a loaded 2-core CI machine is slow.
 */
final class CPrograms {

    /** How long a compile or a run may take before it is killed and the test fails. */
    static final long WAIT_SECONDS = 60;

    private CPrograms() {}

    /** Compiles {@code src/main/c/NAME.c} into {@code dir/NAME} with {@code flags} beside the bundle's; the binary. */
    static Path compile(final Path dir, final String name, final String... flags)
            throws IOException, InterruptedException {
        final Path binary = dir.resolve(name);
        final List<String> command = new ArrayList<>(List.of("gcc", "-O2", "-Wall", "-Werror"));
        command.addAll(List.of(flags));
        command.addAll(List.of("-o", binary.toString(), "src/main/c/" + name + ".c"));
        run(command, dir, 0);
        return binary;
    }

    /**
     * Runs {@code command} in the module's directory, which must exit with {@code status} within
     * {@link #WAIT_SECONDS} (else it is killed and the test fails); returns its output.
     */
    static String run(final List<String> command, final Path dir, final int status)
            throws IOException, InterruptedException {
        final Path log = dir.resolve("output.txt");
        final Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        final boolean ended = process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS);
        if (!ended) {
            process.destroyForcibly();
        }
        final String output = Files.readString(log);
        assertThat(ended).as("%s ended; output:%n%s", command, output).isTrue();
        assertThat(process.exitValue())
                .as("%s exit status; output:%n%s", command, output)
                .isEqualTo(status);
        return output;
    }

    static boolean onPath(final String command) {
        for (final String directory : System.getenv().getOrDefault("PATH", "").split(":", -1)) {
            if (!directory.isEmpty() && Files.isExecutable(Path.of(directory, command))) {
                return true;
            }
        }
        return false;
    }
}
