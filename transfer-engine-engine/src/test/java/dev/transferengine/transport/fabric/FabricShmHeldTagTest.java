package dev.transferengine.transport.fabric;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link FabricEndpoint#tagsMatchBuffersThatFit} holds for the shm provider of the libfabric this run loads: where
 * it says tagged, shm matches a held (unexpected) tagged message with the ignore bits of the receive posted after
 * it; where it says untagged, shm does not. {@code src/test/c/shm_held_tagged.c} does both, in C, built against the
 * headers of the same libfabric.
 */
class FabricShmHeldTagTest {

    private static final Path SOURCE = Path.of("src/test/c/shm_held_tagged.c");

    @Test
    void sizeTagsAreUsedOnShmExactlyWhereItMatchesHeldMessagesByTheirIgnoreBits(@TempDir final Path dir)
            throws Exception {
        FabricFixture.assumeAvailable("shm");
        assumeTrue(CPrograms.onPath("gcc"), "needs gcc on the PATH");
        final String library = FabricFixture.library();
        assumeTrue(library != null, "no libfabric named for this run");
        final List<String> gcc = new ArrayList<>(
                List.of("gcc", "-o", dir.resolve("shm_held_tagged").toString()));
        if (library.equals(FabricTransport.DEFAULT_LIBRARY)) {
            assumeTrue(
                    Files.exists(Path.of("/usr/include/rdma/fi_tagged.h")),
                    "needs the libfabric headers (Debian package libfabric-dev)");
        } else {
            // a libfabric of its own (TE_FABRIC_LIBRARY=<prefix>/lib/libfabric.so.1): its headers and its library
            final Path lib =
                    Path.of(library).toAbsolutePath().resolveSibling(".").normalize();
            final Path include = lib.resolveSibling("include");
            assumeTrue(Files.exists(include.resolve("rdma/fi_tagged.h")), () -> "needs the headers under " + include);
            gcc.addAll(List.of("-I" + include, "-L" + lib, "-Wl,-rpath," + lib));
        }
        gcc.addAll(List.of(SOURCE.toAbsolutePath().toString(), "-lfabric"));
        CPrograms.run(gcc, dir);

        final String observed =
                CPrograms.run(List.of(dir.resolve("shm_held_tagged").toString()), dir);
        final int version = FabricLibrary.open(library).version();
        final String expected = FabricEndpoint.tagsMatchBuffersThatFit("shm", version)
                ? "large-into-smaller held\nsmall-into-larger matched"
                : "large-into-smaller truncated\nsmall-into-larger held";
        assertThat(observed)
                .as("shm of libfabric %s", FabricLibrary.versionText(version))
                .isEqualTo(expected);
    }
}
