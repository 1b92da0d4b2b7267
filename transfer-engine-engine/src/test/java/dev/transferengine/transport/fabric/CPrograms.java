package dev.transferengine.transport.fabric;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Builds and runs the C programs under {@code src/test/c} that check the binding against libfabric itself. */
final class CPrograms {

    /** How long a program (a compiler, a check) may run: as long as a child JVM's line, on a loaded CI machine. */
    private static final Duration RUN_WAIT = ChildJvm.LINE_WAIT;
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
     * Compiles {@code source} into {@code dir/name} against the libfabric this run loads (its headers and library
     * where {@code TE_FABRIC_LIBRARY} names one); skips the calling test where gcc or the headers are missing.
     */
    static Path compile(final Path source, final Path dir, final String name) throws IOException, InterruptedException {
        assumeTrue(onPath("gcc"), "needs gcc on the PATH");
        final String library = FabricFixture.library();
        assumeTrue(library != null, "no libfabric named for this run");
        final Path program = dir.resolve(name);
        final List<String> gcc = new ArrayList<>(List.of("gcc", "-o", program.toString()));
        if (library.equals(FabricTransport.DEFAULT_LIBRARY)) {
            assumeTrue(
                    Files.exists(Path.of("/usr/include/rdma/fi_tagged.h")),
                    "needs the libfabric headers (Debian package libfabric-dev)");
        } else {
            final Path lib =
                    Path.of(library).toAbsolutePath().resolveSibling(".").normalize();
            final Path include = lib.resolveSibling("include");
            assumeTrue(Files.exists(include.resolve("rdma/fi_tagged.h")), () -> "needs the headers under " + include);
            gcc.addAll(List.of("-I" + include, "-L" + lib, "-Wl,-rpath," + lib));
        }
        gcc.addAll(List.of(source.toAbsolutePath().toString(), "-lfabric"));
        run(gcc, dir);
        return program;
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
