package dev.transferengine.transport.fabric;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Clearing the pid of a replaced shm endpoint's region, and telling whether this process maps a name's current
 * region, on files laid out like one, without libfabric.
 */
class FabricShmRegionTest {

    private final String shortName = "te-region-test-" + UUID.randomUUID();
    private final byte[] name = ("fi_shm://" + shortName + "\0").getBytes(StandardCharsets.US_ASCII);
    private final Path path = Path.of("/dev/shm", shortName);

    @AfterEach
    void remove() throws IOException {
        Files.deleteIfExists(path);
    }

    @Test
    void theRegionPathIsTheNameWithoutPrefixOrNul() {
        assertThat(FabricShmRegion.path(name)).isEqualTo(path);
    }

    @Test
    void aVersion8RegionOfThisProcessLosesItsPid() throws IOException {
        write(FabricShmRegion.SMR_VERSION_2_1, (int) ProcessHandle.current().pid());

        assertThat(FabricShmRegion.forgetOwner(name)).isTrue();
        assertThat(pid()).isZero();
    }

    @Test
    void anotherLayoutOrAnotherProcesssRegionIsLeftAsItIs() throws IOException {
        write(5, (int) ProcessHandle.current().pid());
        assertThat(FabricShmRegion.forgetOwner(name)).isFalse();
        assertThat(pid()).isEqualTo((int) ProcessHandle.current().pid());

        write(FabricShmRegion.SMR_VERSION_2_1, 1);
        assertThat(FabricShmRegion.forgetOwner(name)).isFalse();
        assertThat(pid()).isEqualTo(1);

        Files.delete(path);
        assertThat(FabricShmRegion.forgetOwner(name)).as("no region").isFalse();
    }

    @Test
    void onlyTheRegionANameHasNowCountsAsMappedHere() throws IOException {
        write(FabricShmRegion.SMR_VERSION_2_1, 1);
        assertThat(FabricShmRegion.mappedHere(name)).as("not mapped").isFalse();
        try (Arena arena = Arena.ofConfined()) {
            map(arena);
            assertThat(FabricShmRegion.mappedHere(name)).as("mapped").isTrue();

            Files.delete(path);
            write(FabricShmRegion.SMR_VERSION_2_1, 1);
            assertThat(FabricShmRegion.mappedHere(name))
                    .as("only the unlinked region under that name is mapped (a replaced peer's old one)")
                    .isFalse();
            map(arena);
            assertThat(FabricShmRegion.mappedHere(name))
                    .as("the new region mapped too")
                    .isTrue();
        }
        Files.delete(path);
        assertThat(FabricShmRegion.mappedHere(name)).as("no region").isFalse();
    }

    private void map(final Arena arena) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            channel.map(FileChannel.MapMode.READ_WRITE, 0, 64, arena);
        }
    }

    private void write(final int version, final int pid) throws IOException {
        Assumptions.assumeTrue(Files.isWritable(path.getParent()), "needs a writable /dev/shm");
        final ByteBuffer header = ByteBuffer.allocate(64).order(ByteOrder.nativeOrder());
        header.put(0, (byte) version).putInt(4, pid);
        Files.write(path, header.array());
    }

    private int pid() throws IOException {
        return ByteBuffer.wrap(Files.readAllBytes(path))
                .order(ByteOrder.nativeOrder())
                .getInt(4);
    }
}
