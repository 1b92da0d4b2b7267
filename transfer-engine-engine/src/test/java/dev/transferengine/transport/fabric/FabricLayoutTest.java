package dev.transferengine.transport.fabric;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
        assumeTrue(CPrograms.onPath("gcc"), "needs gcc on the PATH");
        final Path binary = dir.resolve("fabric_layout");
        CPrograms.run(
                List.of("gcc", "-o", binary.toString(), SOURCE.toAbsolutePath().toString()), dir);

        final Map<String, Long> fromC = new LinkedHashMap<>();
        for (final String line : CPrograms.run(List.of(binary.toString()), dir).split("\n", -1)) {
            final int space = line.lastIndexOf(' ');
            fromC.put(line.substring(0, space), Long.parseLong(line.substring(space + 1)));
        }

        assertThat(FabricLayout.entries()).containsExactlyInAnyOrderEntriesOf(fromC);
    }
}
