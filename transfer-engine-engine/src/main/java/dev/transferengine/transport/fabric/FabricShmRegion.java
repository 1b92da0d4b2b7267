package dev.transferengine.transport.fabric;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The header of an shm endpoint's own shared-memory region ({@code /dev/shm/<name>}), as libfabric 2.x's shm lays
 * it out ({@code struct smr_region}: {@code uint8_t version}, two reserved/flag fields, {@code int pid} at byte 4).
 * An instance maps the header of one region of this process's, so that its pid can still be set after the endpoint
 * closed and its file was unlinked (peers keep their mapping of it).
 *
 * <p>Why the engine touches it: a peer process that mapped an endpoint keeps that mapping while the endpoint's
 * name stays the same. When the endpoint is replaced under its name ({@link FabricEndpoint#replace}), the new one
 * announces itself to each peer with a connection request naming its pid, and 2.1's peer maps the name anew only if
 * the pid in the region it mapped differs ({@code smr_progress_connreq}); the same pid makes it answer into the old,
 * closed region, and the new endpoint's posts to that peer are turned away (-FI_EAGAIN) for good. Clearing the old
 * region's pid makes every such peer map the new one. Measured with a C reproducer (a killed peer stalls the
 * endpoint; the replacement under the same name reaches a peer that mapped the old one only with the pid cleared).
 * libfabric 1.17's peer crashed on the same connection request (SIGSEGV in its progress), so it is done only for the
 * 2.x layout (version byte {@value #SMR_VERSION_2_1}) and only where the header names this process.
 *
 * <p>When: only while a region of the name is there to be mapped, that is after the new endpoint is enabled. 2.1
 * does not check that re-mapping ({@code smr_progress_connreq}, smr_progress.c:899-906, goes on with a NULL region
 * and writes to its peer data): a peer that takes any connection request of ours while a region it mapped shows
 * another pid and the name has no initialized region (between the old endpoint's close and the new one's enable)
 * dies with SIGSEGV at address 0x70 ({@code peer_data_offset}). So the pid is cleared after the new endpoint is
 * enabled, and the regions of earlier replacements get their pid back while the name has none ({@link #claim}).
 */
final class FabricShmRegion implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(FabricShmRegion.class);

    /** {@code SMR_VERSION} of libfabric 2.1's shm. */
    static final int SMR_VERSION_2_1 = 8;

    private static final long VERSION_AT = 0;
    private static final long PID_AT = 4;
    private static final int OUR_PID = (int) ProcessHandle.current().pid();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment header;

    private FabricShmRegion(final FileChannel channel) throws IOException {
        this.header = channel.map(FileChannel.MapMode.READ_WRITE, 0, PID_AT + 4, arena);
    }

    /**
     * Maps the header of the region of this process's shm endpoint {@code name} (the address bytes fi_getname gave,
     * {@code fi_shm://...} and a NUL), where it is a 2.1 region of this process.
     *
     * @return the mapped header, or null (logged at debug) where the region is missing or not as expected
     */
    static @Nullable FabricShmRegion mapOwn(final byte[] name) {
        final Path path = path(name);
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (channel.size() < PID_AT + 4) {
                return null;
            }
            final FabricShmRegion region = new FabricShmRegion(channel);
            final int version = region.header.get(JAVA_BYTE, VERSION_AT) & 0xff;
            final int pid = region.header.get(JAVA_INT, PID_AT);
            if (version == SMR_VERSION_2_1 && pid == OUR_PID) {
                return region;
            }
            region.close();
            LOG.debug("shm: region {} is version {} of pid {}: left as it is", path, version, pid);
        } catch (final IOException | RuntimeException e) {
            LOG.debug("shm: could not map the header of {}: {}", path, e.toString());
        }
        return null;
    }

    /** Writes 0 over the region's pid: a peer that mapped it maps the name anew at our next connection request. */
    void forgetOwner() {
        header.set(JAVA_INT, PID_AT, 0);
    }

    /**
     * Writes this process's pid back: a peer that still maps this region takes our connection requests without
     * mapping the name anew, which it must not try while the name has no region.
     */
    void claim() {
        header.set(JAVA_INT, PID_AT, OUR_PID);
    }

    /** Unmaps the header (the region itself lives on while a peer maps it). */
    @Override
    public void close() {
        arena.close();
    }

    /**
     * Removes the file of this process's shm endpoint {@code name} where one exists before the endpoint is enabled:
     * it is stale, and shm would refuse the endpoint for it.
     *
     * <p>Why: shm names an endpoint {@code <pid>:<uid>:<index>} (its index counts this process's endpoints) when it
     * opens it, and fi_enable creates {@code /dev/shm/<name>}. A process that was killed or crashed leaves its files,
     * and a later process that gets its pid takes the same names: where the file is there, 1.17 and 2.1 fail
     * fi_enable with -FI_EBUSY (the pid it names, ours now, is alive), and a file left empty (killed before it was
     * sized) crashes them (SIGBUS). A file named after this process's pid is stale: no endpoint of this process holds
     * that name (the one replaced under it, {@link FabricEndpoint#replace}, closed first), and no other process has
     * our pid (shm assumes its peers share one pid namespace: its CMA copies and its own stale check go by pid).
     * Other names, links and files of another user are left to shm (logged).
     */
    static void removeStale(final byte[] name) {
        final Path path = path(name);
        if (!path.getFileName().toString().startsWith(ProcessHandle.current().pid() + ":")) {
            return; // not named after this process: may be another's, live
        }
        try {
            final Map<String, Object> file =
                    Files.readAttributes(path, "unix:uid,isRegularFile", LinkOption.NOFOLLOW_LINKS);
            if (!Boolean.TRUE.equals(file.get("isRegularFile"))
                    || !Objects.equals(file.get("uid"), FabricShmKeys.OUR_UID)) {
                LOG.warn(
                        "shm: {} is in the way of this process's endpoint of that name and is not our own file"
                                + " (uid {}, regular file: {}): left alone, libfabric is likely to refuse the endpoint",
                        path,
                        file.get("uid"),
                        file.get("isRegularFile"));
                return;
            }
            Files.delete(path);
            LOG.warn(
                    "shm: removed {}, left by a killed or crashed process that had this pid before: libfabric refuses"
                            + " an endpoint whose file exists (fi_enable: EBUSY)",
                    path);
        } catch (final NoSuchFileException e) {
            // no stale file: the usual case
        } catch (final IOException | UnsupportedOperationException | IllegalArgumentException e) {
            LOG.warn("shm: could not remove the stale {}: {}", path, e.toString());
        }
    }

    /**
     * Whether this process maps the region that the shm endpoint {@code name} has now (by its inode, in
     * {@code /proc/self/maps}): a peer endpoint replaced under that name is mapped anew here only by taking its
     * connection request (or by a post after a removal from the AV), while the old, unlinked region shows as deleted.
     * False where the region or the maps cannot be read.
     */
    static boolean mappedHere(final byte[] name) {
        final Path path = path(name);
        try {
            final String inode = Files.getAttribute(path, "unix:ino").toString();
            final String file = path.toString();
            try (var lines = Files.lines(Path.of("/proc/self/maps"), StandardCharsets.US_ASCII)) {
                // address, permissions, offset, device, inode, path[, "(deleted)"]
                return lines.map(line -> line.trim().split("\\s+", -1))
                        .anyMatch(fields -> fields.length == 6 && fields[4].equals(inode) && fields[5].equals(file));
            }
        } catch (final IOException | RuntimeException e) {
            LOG.debug("shm: could not tell whether {} is mapped here: {}", path, e.toString());
            return false;
        }
    }

    /** {@code /dev/shm/} and the name without its {@code fi_shm://} prefix and NUL. */
    static Path path(final byte[] name) {
        int length = 0;
        while (length < name.length && name[length] != 0) {
            length++;
        }
        final String text = new String(name, 0, length, StandardCharsets.US_ASCII);
        final int prefix = text.indexOf("://");
        return Path.of("/dev/shm", prefix < 0 ? text : text.substring(prefix + 3));
    }
}
