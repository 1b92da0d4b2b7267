package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.UUID;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The keys an shm endpoint publishes and how a peer checks an access against them, without libfabric. */
class FabricShmKeysTest {

    private static final long KEY = 0x1234_5678_9abcL;

    private final Arena arena = Arena.ofShared();
    private final byte[] name = ("fi_shm://test-" + UUID.randomUUID()).getBytes(StandardCharsets.US_ASCII);
    private final NetworkAddress address = FabricAddress.of("shm", name);
    private FabricShmKeys published;
    private FabricShmKeys.View peer;

    @BeforeEach
    void publish() {
        Assumptions.assumeTrue(Files.isWritable(FabricShmKeys.pathOf(name).getParent()), "needs a writable /dev/shm");
        published = Objects.requireNonNull(FabricShmKeys.publish(name, arena));
        published.put(KEY, 4096, 8192, FabricShmKeys.REMOTE_WRITE);
        peer = Objects.requireNonNull(FabricShmKeys.open(name, address, arena));
    }

    @AfterEach
    void close() {
        if (published != null) {
            published.close(); // again after the test closed it: changes nothing
        }
        arena.close();
    }

    @Test
    void anAccessThePeerPublishedIsTaken() {
        assertThat(peer.refusal(KEY, 4096, 4096, true)).isNull();
        assertThat(peer.refusal(KEY, 8192, 0, true)).as("zero bytes at the end").isNull();
    }

    @Test
    void aRevokedOrUnknownKeyIsRefusedAsUnknown() {
        assertThat(published.revoke(KEY)).as("no post was in progress").isTrue();

        assertThat(reason(peer.refusal(KEY, 4096, 0, true))).isEqualTo(RemoteAccessException.Reason.UNKNOWN_KEY);
        assertThat(reason(peer.refusal(KEY + 1, 4096, 8, true))).isEqualTo(RemoteAccessException.Reason.UNKNOWN_KEY);
        assertThat(published.isFree(KEY)).isTrue();
    }

    @Test
    void anAccessOutsideTheRegionOrNotAllowedIsRefusedWithItsReason() {
        assertThat(reason(peer.refusal(KEY, 4096, 4097, true))).isEqualTo(RemoteAccessException.Reason.OUT_OF_BOUNDS);
        assertThat(reason(peer.refusal(KEY, 4095, 1, true))).isEqualTo(RemoteAccessException.Reason.OUT_OF_BOUNDS);
        assertThat(reason(peer.refusal(KEY, 4096, 8, false))).isEqualTo(RemoteAccessException.Reason.NOT_READABLE);
    }

    @Test
    void aPeerSeesEachReplacementOfTheEndpointAndTheKeysStayValid() {
        assertThat(peer.replacements()).isZero();
        assertThat(published.replacing()).as("no post was in progress").isTrue();
        assertThat(published.replacing()).isTrue();

        assertThat(peer.replacements()).isEqualTo(2);
        assertThat(peer.refusal(KEY, 4096, 4096, true))
                .as("same domain, same keys")
                .isNull();
        assertThat(peer.ownerGone()).isFalse();
    }

    @Test
    void aRevocationWaitsForAPostInProgressAndGivesUpWhenItNeverEnds() {
        peer.enter();

        assertThat(published.revoke(KEY)).isFalse();
        peer.exit();
        assertThat(published.revoke(KEY)).isTrue();
    }

    @Test
    void aClosedPeerFailsEveryAccessAsUnreachable() {
        published.close();

        assertThat(peer.refusal(KEY, 4096, 8, true)).isInstanceOf(PeerUnreachableException.class);
        assertThat(FabricShmKeys.open(name, address, arena))
                .as("the file is gone")
                .isNull();
    }

    /**
     * Another local user creates an endpoint's table before the endpoint does (the name follows from its pid),
     * world-writable, and keeps it open to rewrite what the endpoint publishes (issue 16, the shm key tables from
     * outside: before, the endpoint truncated and used that file, and the squatter's "closed" mark made every peer
     * refuse every access). Here the squatter is this process; the outcome is the same for another user's file that
     * the endpoint may remove.
     */
    @Test
    void aTableCreatedBeforeTheEndpointIsReplacedAndItsCreatorCanNoLongerWriteIt() throws Exception {
        final byte[] other = ("fi_shm://squatted-" + UUID.randomUUID()).getBytes(StandardCharsets.US_ASCII);
        final Path path = FabricShmKeys.pathOf(other);
        Files.createFile(path);
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-rw-rw-"));
        try (FileChannel squatter = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            final FabricShmKeys keys = Objects.requireNonNull(FabricShmKeys.publish(other, arena));
            try {
                keys.put(KEY, 4096, 8192, FabricShmKeys.REMOTE_WRITE);
                squatter.write(ByteBuffer.wrap(new byte[64]).put(40, (byte) 1), 0); // the table's "closed" mark
                squatter.truncate(0);

                assertThat(Files.getPosixFilePermissions(path))
                        .containsExactlyInAnyOrder(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
                final FabricShmKeys.View view =
                        Objects.requireNonNull(FabricShmKeys.open(other, FabricAddress.of("shm", other), arena));
                assertThat(view.refusal(KEY, 4096, 8, true)).isNull();
            } finally {
                keys.close();
            }
        }
    }

    /** A table that group or others may write was not made by the peer it names: it is not used (not checked). */
    @Test
    void aPeerTableOthersMayWriteIsNotTrusted() throws Exception {
        Files.setPosixFilePermissions(FabricShmKeys.pathOf(name), PosixFilePermissions.fromString("rw-rw-rw-"));

        assertThat(FabricShmKeys.open(name, address, arena)).isNull();
    }

    /** A table of another user is not trusted either, even owner-only (a root peer could open it). */
    @Test
    void aPeerTableOfAnotherUserIsNotTrusted() throws Exception {
        final Path path = FabricShmKeys.pathOf(name);
        try {
            Files.setAttribute(path, "unix:uid", 65534);
        } catch (final IOException e) {
            Assumptions.abort("changing a file's owner needs root: " + e);
        }

        assertThat(FabricShmKeys.open(name, address, arena)).isNull();
    }

    /**
     * The tables that killed processes left are removed (a process gone, or an earlier one of this pid), and nothing
     * else: a live process's table, one not complete, a link and what it points to stay.
     */
    @Test
    void theTablesOfGoneProcessesAreRemovedAndNothingElse() throws Exception {
        final Process exited = new ProcessBuilder("true").start();
        exited.waitFor();
        final Path ofExited = table(exited.pid(), 0, true);
        final Path ofEarlierUs = table(ProcessHandle.current().pid(), 1, true);
        final Path incomplete = table(exited.pid(), 0, false);
        final Path target = Files.createTempFile("te-keys-target", "");
        final Path link =
                FabricShmKeys.pathOf(("fi_shm://link-" + UUID.randomUUID()).getBytes(StandardCharsets.US_ASCII));
        try {
            Files.copy(ofExited, target, StandardCopyOption.REPLACE_EXISTING);
            Files.createSymbolicLink(link, target);

            FabricShmKeys.removeTablesOfGoneProcesses();

            assertThat(ofExited).doesNotExist();
            assertThat(ofEarlierUs).doesNotExist();
            assertThat(FabricShmKeys.pathOf(name)).as("this process's").isRegularFile();
            assertThat(incomplete).isRegularFile();
            assertThat(link).isSymbolicLink();
            assertThat(target).isRegularFile();
        } finally {
            for (final Path file : new Path[] {ofExited, ofEarlierUs, incomplete, link, target}) {
                Files.deleteIfExists(file);
            }
        }
    }

    /**
     * A table as {@link FabricShmKeys#publish} writes it, then given {@code pid} and {@code started} (and no magic
     * where not {@code complete}), as a process of that pid would have left it.
     */
    private Path table(final long pid, final long started, final boolean complete) throws IOException {
        final byte[] other = ("fi_shm://left-" + UUID.randomUUID()).getBytes(StandardCharsets.US_ASCII);
        Objects.requireNonNull(FabricShmKeys.publish(other, arena));
        final Path path = FabricShmKeys.pathOf(other);
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.WRITE)) {
            final ByteBuffer value = ByteBuffer.allocate(Long.BYTES).order(ByteOrder.nativeOrder());
            channel.write(value.putLong(0, pid), FabricShmKeys.PID_AT);
            channel.write(value.clear().putLong(0, started), FabricShmKeys.STARTED_AT);
            if (!complete) {
                channel.write(value.clear().putLong(0, 0), 0);
            }
        }
        return path;
    }

    private static RemoteAccessException.Reason reason(final @Nullable TransferEngineException refusal) {
        assertThat(refusal).isInstanceOf(RemoteAccessException.class);
        return ((RemoteAccessException) Objects.requireNonNull(refusal)).reason();
    }
}
