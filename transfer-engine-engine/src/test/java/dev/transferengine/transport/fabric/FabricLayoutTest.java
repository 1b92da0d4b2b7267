package dev.transferengine.transport.fabric;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The hand-written layouts match offsetof/sizeof from the installed libfabric headers. */
class FabricLayoutTest {

    private static final Path SOURCE = Path.of("src/test/c/fabric_layout.c");

    @Test
    void everyStructFieldAndOpsSlotMatchesTheCHeaders(@TempDir final Path dir) throws Exception {
        assumeTrue(
                Files.exists(Path.of("/usr/include/rdma/fabric.h")),
                "needs the libfabric headers (Debian package libfabric-dev)");
        assumeTrue(onPath("gcc"), "needs gcc on the PATH");
        final Path binary = dir.resolve("fabric_layout");
        run(List.of("gcc", "-o", binary.toString(), SOURCE.toAbsolutePath().toString()), dir);

        final Map<String, Long> fromC = new LinkedHashMap<>();
        for (final String line : run(List.of(binary.toString()), dir).split("\n", -1)) {
            final int space = line.lastIndexOf(' ');
            fromC.put(line.substring(0, space), Long.parseLong(line.substring(space + 1)));
        }

        assertThat(FabricLayout.entries()).containsExactlyInAnyOrderEntriesOf(fromC);
    }

    private static boolean onPath(final String command) {
        for (final String directory : System.getenv().getOrDefault("PATH", "").split(":", -1)) {
            if (!directory.isEmpty() && Files.isExecutable(Path.of(directory, command))) {
                return true;
            }
        }
        return false;
    }

    private static String run(final List<String> command, final Path dir) throws IOException, InterruptedException {
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
