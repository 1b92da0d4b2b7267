package dev.transferengine.transport.fabric;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

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
        final Path program = CPrograms.compile(SOURCE, dir, "shm_held_tagged");

        final String observed = CPrograms.run(List.of(program.toString()), dir);
        final String library = Objects.requireNonNull(FabricFixture.library(), "compile skips a run without one");
        final int version = FabricLibrary.open(library).version();
        final String expected = FabricEndpoint.tagsMatchBuffersThatFit("shm", version)
                ? "large-into-smaller held\nsmall-into-larger matched"
                : "large-into-smaller truncated\nsmall-into-larger held";
        assertThat(observed)
                .as("shm of libfabric %s", FabricLibrary.versionText(version))
                .isEqualTo(expected);
    }
}
