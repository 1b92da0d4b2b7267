package dev.transferengine.transport.fabric;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.UUID;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Clearing and restoring the pid of a replaced shm endpoint's region, removing a stale one, and telling whether this process maps
 * a name's current region, on files laid out like one, without libfabric.
 */
class FabricShmRegionTest {

    private static final int OUR_PID = (int) ProcessHandle.current().pid();

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

    /**
     * The header stays mapped after the file is unlinked (as the endpoint's close does): its pid is cleared once the
     * new endpoint is there, and set back while a later replacement leaves the name without a region.
     */
    @Test
    void aVersion8RegionOfThisProcessLosesItsPidAndGetsItBackAfterItsFileIsGone() throws IOException {
        write(FabricShmRegion.SMR_VERSION_2_1, OUR_PID);
        try (Arena arena = Arena.ofConfined();
                FabricShmRegion region = Objects.requireNonNull(FabricShmRegion.mapOwn(name))) {
            final MemorySegment seen;
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
                seen = channel.map(FileChannel.MapMode.READ_ONLY, 0, 8, arena);
            }
            Files.delete(path);

            region.forgetOwner();
            assertThat(seen.get(JAVA_INT, 4)).isZero();
            region.claim();
            assertThat(seen.get(JAVA_INT, 4)).isEqualTo(OUR_PID);
        }
    }

    @Test
    void anotherLayoutOrAnotherProcesssRegionIsNotMapped() throws IOException {
        write(5, OUR_PID);
        assertThat(FabricShmRegion.mapOwn(name)).isNull();

        write(FabricShmRegion.SMR_VERSION_2_1, 1);
        assertThat(FabricShmRegion.mapOwn(name)).isNull();
        assertThat(pid()).isEqualTo(1);

        Files.delete(path);
        assertThat(FabricShmRegion.mapOwn(name)).as("no region").isNull();
    }

    /**
     * A file named after this process's pid before its endpoint is enabled was left by a killed process of that pid
     * (issue 21): it goes. A name of another pid, a link and another user's file stay.
     */
    @Test
    void aFileNamedAfterThisProcessIsRemovedAsStaleAndNothingElse() throws IOException {
        Assumptions.assumeTrue(Files.isWritable(path.getParent()), "needs a writable /dev/shm");
        final String unique = ":te-stale-test-" + UUID.randomUUID();
        final Path ours = Path.of("/dev/shm", ProcessHandle.current().pid() + unique);
        final Path another = Path.of("/dev/shm", "1" + unique);
        final Path link = Path.of("/dev/shm", ProcessHandle.current().pid() + unique + "-link");
        try {
            Files.write(ours, new byte[4096]);
            Files.write(another, new byte[4096]);
            Files.createSymbolicLink(link, another);

            FabricShmRegion.removeStale(nameOf(ours));
            FabricShmRegion.removeStale(nameOf(another));
            FabricShmRegion.removeStale(nameOf(link));
            FabricShmRegion.removeStale(nameOf(ours)); // no file: nothing to do

            assertThat(ours).doesNotExist();
            assertThat(another).isRegularFile();
            assertThat(link).isSymbolicLink();
        } finally {
            for (final Path file : new Path[] {ours, another, link}) {
                Files.deleteIfExists(file);
            }
        }
    }

    /** A file of another user stays, even named after this process. */
    @Test
    void aFileOfAnotherUserNamedAfterThisProcessStays() throws IOException {
        Assumptions.assumeTrue(Files.isWritable(path.getParent()), "needs a writable /dev/shm");
        final Path ours = Path.of("/dev/shm", ProcessHandle.current().pid() + ":te-stale-test-" + UUID.randomUUID());
        try {
            Files.write(ours, new byte[0]);
            try {
                Files.setAttribute(ours, "unix:uid", 65534);
            } catch (final IOException e) {
                Assumptions.abort("changing a file's owner needs root: " + e);
            }

            FabricShmRegion.removeStale(nameOf(ours));

            assertThat(ours).exists();
        } finally {
            Files.deleteIfExists(ours);
        }
    }

    /** The address bytes of the shm endpoint whose region is {@code file}, as fi_getname gives them. */
    private static byte[] nameOf(final Path file) {
        return ("fi_shm://" + file.getFileName() + "\0").getBytes(StandardCharsets.US_ASCII);
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
