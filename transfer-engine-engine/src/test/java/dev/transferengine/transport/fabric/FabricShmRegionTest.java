package dev.transferengine.transport.fabric;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Clearing the pid of a replaced shm endpoint's region, on files laid out like one, without libfabric. */
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
