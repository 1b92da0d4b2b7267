package dev.transferengine.transport.fabric;

import dev.transferengine.NetworkAddress;
import dev.transferengine.exceptions.PeerUnreachableException;
import dev.transferengine.exceptions.RemoteAccessException;
import dev.transferengine.exceptions.TransferEngineException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The remote keys of an shm endpoint, published in a shared-memory file that its peers map, so that a writer or
 * reader refuses an access the target would refuse before handing it to the provider.
 *
 * <p>Why: libfabric 2.1's shm target drops a command whose key, range or access it cannot verify without answering
 * it ({@code smr_progress_cmd_rma} returns before any completion or response). Whatever the protocol, the initiator
 * is then misled or stuck: an inline or inject write (and a zero-byte SAR write, which has nothing to copy) is
 * reported done though nothing landed; a SAR write leaves the peer's {@code sar_status} set, so every later
 * operation to that peer is turned away with -FI_EAGAIN, and its response, like that of an iov (CMA) write, stays
 * at the head of the endpoint's in-order response queue, so no later delivery-complete operation to any peer
 * completes; a refused inject write also keeps one of the target's inject buffers. No provider call undoes that
 * short of closing the endpoint. The engine therefore never lets a refused access reach shm: the target publishes
 * what it would accept, and the initiator checks each write and read against it when it posts.
 *
 * <p><b>The file.</b> {@code /dev/shm/transfer-engine-keys-<hash of the endpoint name>}: a header (magic, capacity,
 * a count of posts in progress, the owner's pid) and a table of {key, first byte, end, access}, one entry per value
 * of the key's low bits (shm's keys are the engine's random 63-bit ones, picked where that entry is free: see
 * {@link FabricRegions}). Only the owner writes entries; a key is published once its registration exists and
 * revoked before it is closed. A killed owner leaves its file: the first table a process publishes removes those of
 * processes that are gone ({@link #removeTablesOfGoneProcesses}).
 *
 * <p><b>No check races a revocation.</b> An initiator counts itself in ({@link View#enter}) before it reads the
 * entry and out ({@link View#exit}) once the provider queued its command at the target. The owner revokes a key,
 * waits until no post is in progress (bounded by {@link #QUIESCE_NANOS}: a peer killed between the two leaves the
 * count raised), and only then closes the registration. Both sides use volatile accesses, so either the initiator
 * sees the revocation or the owner sees it counted in. A command queued just before the revocation that the owner's
 * provider handles only after the registration closed is still dropped unanswered: handling the queue inside the
 * revocation (a progress call) crashed 2.1 in smr_progress_connreq, on a connection request from an endpoint of
 * this process that had closed, so the window stays the owner's next progress call.
 *
 * <p>A peer without the file (another engine version, or /dev/shm not writable) is not checked: its refusals keep
 * shm's behaviour above. Not thread-safe: the owning domain's worker publishes and revokes, each peer's view is used
 * by the worker of the domain that posts to it.
 */
final class FabricShmKeys implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(FabricShmKeys.class);

    /** "TEKEYS" and layout version 1. */
    private static final long MAGIC = 0x5445_4B45_5953_0001L;

    private static final long MAGIC_AT = 0;
    private static final long CAPACITY_AT = 8;
    private static final long POSTING_AT = 16;
    static final long PID_AT = 24;
    /** Set once a key could not be published (the table is full): its peers then check nothing. */
    private static final long INCOMPLETE_AT = 32;
    /** When the owner process started (epoch ms; 0 where unknown): with the pid, tells it from a later process. */
    static final long STARTED_AT = 48;
    /** Set when the owner closed its endpoint: peers that still map the table fail every access as unreachable. */
    private static final long CLOSED_AT = 40;
    /**
     * How often the owner replaced its endpoint under the same name (see {@link FabricDomain}, "A gone shm peer"):
     * a peer that reached the endpoint before inserts it into its AV again, which maps the new one.
     */
    static final long REPLACED_AT = 56;

    private static final long HEADER = 64;

    private static final long KEY = 0;
    private static final long START = 8;
    private static final long END = 16;
    private static final long ACCESS = 24;
    private static final long ENTRY = 32;

    private static final long EMPTY = 0;

    static final long REMOTE_WRITE = 1;
    static final long REMOTE_READ = 2;

    /** Entries per endpoint: a power of two; the file is sparse, pages are touched as keys land in them. */
    private static final int CAPACITY = 1 << 14;
    /** How long a revocation waits for the posts in progress at its peers (see the class comment). */
    static final long QUIESCE_NANOS = 20_000_000L;

    private static final VarHandle LONG = JAVA_LONG.varHandle();

    private static final Path DIRECTORY = Path.of("/dev/shm");
    private static final String PREFIX = "transfer-engine-keys-";
    /** Whether this process removed the tables of gone processes yet: once, at its first table. */
    private static final AtomicBoolean SWEPT = new AtomicBoolean();
    /** Readable and writable by the owner only, as shm's own regions (shm_open with S_IRUSR | S_IWUSR). */
    private static final FileAttribute<?> OWNER_ONLY =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

    /** Group and others' permission bits of a file mode. */
    private static final int GROUP_OR_OTHERS = 0077;
    /** This process's (effective) user id, read once: the owner its peers' tables must have. */
    static final int OUR_UID = currentUid();

    private final Path path;
    private final MemorySegment table;

    private FabricShmKeys(final Path path, final MemorySegment table) {
        this.path = path;
        this.table = table;
    }

    /** The file of the endpoint named {@code name} (the bytes fi_getname gives, as its peers insert them). */
    static Path pathOf(final byte[] name) {
        long hash = 0xcbf2_9ce4_8422_2325L; // FNV-1a
        for (final byte b : name) {
            hash = (hash ^ (b & 0xFF)) * 0x0100_0000_01b3L;
        }
        return DIRECTORY.resolve(PREFIX + String.format(Locale.ROOT, "%016x", hash));
    }

    /**
     * Creates the table of the endpoint named {@code name}, mapped into {@code arena}; null, logged, where /dev/shm
     * cannot take it: the endpoint's peers then check nothing, as before.
     *
     * <p>Never an existing file: /dev/shm is writable by every user and the name is known in advance (shm names an
     * endpoint after its pid and uid), so another user could create the file first, world-writable, and rewrite what
     * this endpoint publishes (mark it closed, so that every peer refuses every access, or truncate it under the
     * mappings). A file already there is removed (one an earlier process of ours left, or one we may remove) and the
     * table created anew, owner-only; where it cannot be removed (another user's, in the sticky /dev/shm) nothing is
     * published.
     */
    static @Nullable FabricShmKeys publish(final byte[] name, final Arena arena) {
        if (SWEPT.compareAndSet(false, true)) {
            removeTablesOfGoneProcesses();
        }
        final Path path = pathOf(name);
        try {
            Files.deleteIfExists(path);
            try (FileChannel channel = FileChannel.open(
                    path,
                    Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE),
                    OWNER_ONLY)) {
                final MemorySegment table =
                        channel.map(FileChannel.MapMode.READ_WRITE, 0, HEADER + CAPACITY * ENTRY, arena);
                table.set(JAVA_LONG, CAPACITY_AT, CAPACITY);
                table.set(JAVA_LONG, PID_AT, ProcessHandle.current().pid());
                table.set(JAVA_LONG, STARTED_AT, startedAt(ProcessHandle.current()));
                LONG.setVolatile(table, MAGIC_AT, MAGIC); // last: a peer that sees it sees the rest
                return new FabricShmKeys(path, table);
            }
        } catch (final IOException | UnsupportedOperationException e) {
            LOG.warn(
                    "shm: cannot publish this endpoint's keys in {} ({}{}); its peers cannot refuse a stale key before"
                            + " posting, and libfabric's shm leaves a peer's endpoint stuck after such a write",
                    path,
                    e.toString(),
                    e instanceof AccessDeniedException ? ": a file of another user is in its place" : "");
            return null;
        }
    }

    /**
     * Removes the tables of processes that are gone, and returns how many: a table stays behind when its process is
     * killed (its close removes it otherwise), and only a later endpoint of the same name (so of the same pid) would
     * replace it. Removes only what it can tell is stale: a regular file (a link is neither followed nor removed) of
     * this user, complete (its magic is written last), whose pid names no process now, or names this process while
     * the table's start time is not ours (an earlier process of our pid). A table whose pid another process took
     * stays until a sweep finds it free: that process may be publishing under the same name right then. Control
     * path; lists /dev/shm.
     */
    static int removeTablesOfGoneProcesses() {
        int removed = 0;
        try (DirectoryStream<Path> tables = Files.newDirectoryStream(DIRECTORY, PREFIX + "*")) {
            for (final Path path : tables) {
                try {
                    if (ownerGone(path) && Files.deleteIfExists(path)) {
                        removed++;
                    }
                } catch (final IOException | UnsupportedOperationException | IllegalArgumentException e) {
                    LOG.debug("shm: left the key table {}: {}", path, e.toString());
                }
            }
        } catch (final IOException | DirectoryIteratorException e) {
            LOG.debug("shm: could not remove the key tables of gone processes: {}", e.toString());
        }
        if (removed > 0) {
            LOG.info("shm: removed {} key tables in {} of processes gone without closing them", removed, DIRECTORY);
        }
        return removed;
    }

    /** Whether {@code path} is a table of ours whose process is gone (see {@link #removeTablesOfGoneProcesses}). */
    private static boolean ownerGone(final Path path) throws IOException {
        final Map<String, Object> file =
                Files.readAttributes(path, "unix:uid,isRegularFile", LinkOption.NOFOLLOW_LINKS);
        if (!Boolean.TRUE.equals(file.get("isRegularFile")) || !Objects.equals(file.get("uid"), OUR_UID)) {
            return false;
        }
        final ByteBuffer header = ByteBuffer.allocate((int) HEADER).order(ByteOrder.nativeOrder());
        // read and write: opening a FIFO put in its place for reading only would block
        try (FileChannel channel =
                FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            if (channel.size() < HEADER || channel.read(header, 0) < HEADER) {
                return false;
            }
        }
        if (header.getLong((int) MAGIC_AT) != MAGIC) {
            return false; // not complete: its owner may be writing it now
        }
        final long pid = header.getLong((int) PID_AT);
        final long started = header.getLong((int) STARTED_AT);
        final ProcessHandle us = ProcessHandle.current();
        if (pid == us.pid()) {
            return started != 0 && started != startedAt(us);
        }
        return pid > 0 && ProcessHandle.of(pid).isEmpty();
    }

    /**
     * Maps the table of the peer named {@code name} into {@code arena}; null where the peer publishes none (it is
     * then not checked).
     */
    static @Nullable View open(final byte[] name, final NetworkAddress address, final Arena arena) {
        final Path path = pathOf(name);
        if (!Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)) {
            return null;
        }
        try {
            if (!ownerOnly(path)) {
                return null;
            }
        } catch (final IOException | UnsupportedOperationException | IllegalArgumentException e) {
            LOG.debug("shm: the owner of peer table {} cannot be read: {}", path, e.toString());
            return null;
        }
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (channel.size() < HEADER) {
                return null;
            }
            final MemorySegment header = channel.map(FileChannel.MapMode.READ_WRITE, 0, HEADER, arena);
            if ((long) LONG.getVolatile(header, MAGIC_AT) != MAGIC) {
                return null;
            }
            final long capacity = header.get(JAVA_LONG, CAPACITY_AT);
            if (Long.bitCount(capacity) != 1 || channel.size() < HEADER + capacity * ENTRY) {
                return null;
            }
            return new View(channel.map(FileChannel.MapMode.READ_WRITE, 0, HEADER + capacity * ENTRY, arena), address);
        } catch (final IOException | UnsupportedOperationException e) {
            LOG.debug("shm: the keys of peer {} cannot be mapped: {}", path, e.toString());
            return null;
        }
    }

    /**
     * Whether the table at {@code path} is this process's user's and nobody else may write it, as its owner creates
     * it: shm peers run as one user (shm's own regions are owner-only), so a table of another user, or one others
     * may write, was not made by the peer it names. Such a table is not trusted (logged): the peer is then not
     * checked. Once it is ours, another user can neither remove nor replace it (/dev/shm is sticky), so the check
     * cannot race its open.
     */
    private static boolean ownerOnly(final Path path) throws IOException {
        final int uid = (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        final int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        if (uid == OUR_UID && (mode & GROUP_OR_OTHERS) == 0) {
            return true;
        }
        LOG.warn(
                "shm: ignoring the peer key table {}: owned by uid {} with mode {} (expected uid {}, no access for"
                        + " group or others): not made by that peer, whose accesses are then not checked",
                path,
                uid,
                Integer.toOctalString(mode & 0777),
                OUR_UID);
        return false;
    }

    private static int currentUid() {
        try {
            // /proc/self is owned by the process's effective user
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (final IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return -1; // no table is then ours: peers go unchecked, as without the file
        }
    }

    private static long startedAt(final ProcessHandle process) {
        return process.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    }

    private static long entry(final long key, final long capacity) {
        return HEADER + (key & (capacity - 1)) * ENTRY;
    }

    /**
     * Whether {@code key} may be chosen for a new registration: its entry (the key's low bits) is free. The domain
     * picks its random keys so (see {@link FabricRegions}), which spares the table any probing or tombstones.
     */
    boolean isFree(final long key) {
        return (long) LONG.getVolatile(table, entry(key, CAPACITY) + KEY) == EMPTY;
    }

    /** Whether {@code key} is published (and not revoked). */
    boolean publishes(final long key) {
        return (long) LONG.getVolatile(table, entry(key, CAPACITY) + KEY) == key;
    }

    /**
     * Publishes {@code key} for {@code [start, end)} (in the addressing peers use: virtual addresses or offsets) and
     * {@code access} ({@link #REMOTE_WRITE}, {@link #REMOTE_READ}). Keys that grant no remote access are not
     * published: peers then refuse every access with them, as the provider would. Where the key's entry is taken
     * (more regions than entries), the table is marked incomplete and peers stop checking it.
     */
    void put(final long key, final long start, final long end, final long access) {
        if (access == 0) {
            return;
        }
        final long at = entry(key, CAPACITY);
        if (!isFree(key)) {
            if ((long) LONG.getVolatile(table, INCOMPLETE_AT) == 0) {
                LONG.setVolatile(table, INCOMPLETE_AT, 1L);
                LOG.warn("shm: no free key entry among {} on one endpoint; its peers stop checking keys", CAPACITY);
            }
            return;
        }
        table.set(JAVA_LONG, at + START, start);
        table.set(JAVA_LONG, at + END, end);
        table.set(JAVA_LONG, at + ACCESS, access);
        LONG.setVolatile(table, at + KEY, key); // last: a reader that finds the key reads the rest
    }

    /**
     * Revokes {@code key} and waits (at most {@link #QUIESCE_NANOS}) until no peer is between its check and its
     * post; true if none was, false if the wait ran out. Unknown keys are ignored.
     */
    boolean revoke(final long key) {
        final long at = entry(key, CAPACITY);
        if ((long) LONG.getVolatile(table, at + KEY) == key) {
            LONG.setVolatile(table, at + KEY, EMPTY);
        }
        return quiesce();
    }

    /** Waits (at most {@link #QUIESCE_NANOS}) until no peer is between its check and its post; false if it ran out. */
    private boolean quiesce() {
        final long deadline = System.nanoTime() + QUIESCE_NANOS;
        while ((long) LONG.getVolatile(table, POSTING_AT) > 0) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    /**
     * The owner is about to replace its endpoint: counts the replacement, so that peers that check the table before
     * posting insert the endpoint again first, and waits (bounded, as {@link #revoke}) until no peer is between its
     * check and its post, so that every command posted to the old endpoint is in its queue.
     *
     * @return false if the wait ran out
     */
    boolean replacing() {
        LONG.getAndAdd(table, REPLACED_AT, 1L);
        return quiesce();
    }

    /**
     * Marks the table closed, so that peers that map it fail every later access as unreachable instead of handing
     * it to a provider whose target is gone, and removes the file; the mapping goes with the arena it was made in.
     */
    @Override
    public void close() {
        LONG.setVolatile(table, CLOSED_AT, 1L);
        try {
            Files.deleteIfExists(path);
        } catch (final IOException e) {
            LOG.debug("shm: could not remove {}: {}", path, e.toString());
        }
    }

    /** A peer's published keys, as an initiator checks them. */
    static final class View {

        private final MemorySegment table;
        private final NetworkAddress address;
        private final long capacity;
        private final long pid;

        View(final MemorySegment table, final NetworkAddress address) {
            this.table = table;
            this.address = address;
            this.capacity = table.get(JAVA_LONG, CAPACITY_AT);
            this.pid = table.get(JAVA_LONG, PID_AT);
        }

        /**
         * Whether {@link #refusal} checks every access: false once the owner had more keys than the table holds (it
         * then answers null for keys it cannot tell). Stays false once false.
         */
        boolean checksEveryAccess() {
            return (long) LONG.getVolatile(table, INCOMPLETE_AT) == 0;
        }

        /** The process that published the table. */
        long pid() {
            return pid;
        }

        /**
         * Whether the endpoint that published the table is gone: closed, or its process is (killed, or exited
         * without closing it: no process of its pid, or one that started at another time). Allocates; for the
         * failure path.
         */
        boolean ownerGone() {
            if ((long) LONG.getVolatile(table, CLOSED_AT) != 0) {
                return true;
            }
            final long started = table.get(JAVA_LONG, STARTED_AT);
            return ProcessHandle.of(pid)
                    .map(p -> !p.isAlive() || (started != 0 && startedAt(p) != 0 && startedAt(p) != started))
                    .orElse(true);
        }

        /** How often the owner replaced its endpoint under the same name (see {@link FabricShmKeys#replacing}). */
        long replacements() {
            return (long) LONG.getVolatile(table, REPLACED_AT);
        }

        /** Counts a post in: call before {@link #refusal}, and {@link #exit} once the post returned. */
        void enter() {
            LONG.getAndAdd(table, POSTING_AT, 1L);
        }

        void exit() {
            LONG.getAndAdd(table, POSTING_AT, -1L);
        }

        /**
         * Why the peer would refuse (or could not take) an access of {@code length} bytes at {@code address} with {@code key}
         * ({@code write}: a write, else a read), or null if it would take it (or publishes too little to tell).
         * Does not allocate unless it refuses.
         */
        @Nullable TransferEngineException refusal(final long key, final long address, final long length, final boolean write) {
            if ((long) LONG.getVolatile(table, CLOSED_AT) != 0) {
                return new PeerUnreachableException(
                        this.address,
                        "the shm peer (pid " + pid + ") closed its endpoint; refused before posting, as libfabric's"
                                + " shm would queue it where nobody takes it");
            }
            if ((long) LONG.getVolatile(table, INCOMPLETE_AT) != 0) {
                return null; // overfull: nothing to go by
            }
            final long at = entry(key, capacity);
            if ((long) LONG.getVolatile(table, at + KEY) == key) {
                final long start = table.get(JAVA_LONG, at + START);
                final long end = table.get(JAVA_LONG, at + END);
                final long access = table.get(JAVA_LONG, at + ACCESS);
                if ((long) LONG.getVolatile(table, at + KEY) == key) { // not revoked while it was read
                    return refusal(key, address, length, write, start, end, access);
                }
            }
            return new RemoteAccessException(
                    RemoteAccessException.Reason.UNKNOWN_KEY,
                    "key " + key + " is not registered at the shm peer (pid " + pid + "): never registered, or"
                            + " deregistered or rekeyed since; refused before posting, as libfabric's shm would drop"
                            + " it without an answer");
        }

        private static @Nullable RemoteAccessException refusal(
                final long key,
                final long address,
                final long length,
                final boolean write,
                final long start,
                final long end,
                final long access) {
            if (address < start || address > end || length > end - address) {
                return new RemoteAccessException(
                        RemoteAccessException.Reason.OUT_OF_BOUNDS,
                        (write ? "write" : "read") + " of " + length + " bytes at " + address
                                + " falls outside the region of key " + key + " at the shm peer ([" + start + ", "
                                + end + ")); refused before posting");
            }
            if ((access & (write ? REMOTE_WRITE : REMOTE_READ)) == 0) {
                return write
                        ? new RemoteAccessException(
                                RemoteAccessException.Reason.NOT_WRITABLE,
                                "the region of key " + key + " at the shm peer is not writable remotely; refused"
                                        + " before posting")
                        : new RemoteAccessException(
                                RemoteAccessException.Reason.NOT_READABLE,
                                "the region of key " + key + " at the shm peer is not readable remotely; refused"
                                        + " before posting");
            }
            return null;
        }
    }
}
