package dev.transferengine.transport.fabric;

import dev.transferengine.nativeaccess.Errno;
import dev.transferengine.nativeaccess.NativeCallException;
import dev.transferengine.nativeaccess.NativeEnvironment;
import dev.transferengine.nativeaccess.NativeLibrary;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * The handful of functions libfabric really exports ({@code fi_getinfo}, {@code fi_freeinfo}, {@code fi_dupinfo},
 * {@code fi_fabric}, {@code fi_version}, {@code fi_strerror}); everything else is reached through ops tables by
 * {@link FabricEndpoint}. One instance per library path, opened lazily and kept for the life of the JVM; opening
 * never throws: a missing library or symbol becomes {@link #unavailabilityCause()}.
 *
 * <p>It is also the one place that turns a failed native call into an exception ({@link #failure}).
 */
final class FabricLibrary {

    /** Every address, for reading pointers and C strings the library hands back. */
    @SuppressWarnings("restricted")
    static final MemorySegment NATIVE = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private static final Map<String, FabricLibrary> OPENED = new ConcurrentHashMap<>();
    /** RxM's connection-event polling interval, in microseconds, unless the environment sets its own (see load). */
    private static final String RXM_CM_PROGRESS_INTERVAL_US = "1000";

    private static final String[] EXPORTS = {
        "fi_getinfo", "fi_freeinfo", "fi_dupinfo", "fi_fabric", "fi_version", "fi_strerror"
    };

    private final String path;
    private final @Nullable String cause;
    private final MemorySegment getinfo;
    private final MemorySegment freeinfo;
    private final MemorySegment dupinfo;
    private final MemorySegment fabric;
    private final MemorySegment strerror;
    private final MemorySegment strdup;
    private final int version;

    private FabricLibrary(
            final String path, final @Nullable String cause, final MemorySegment[] symbols, final int version) {
        this.path = path;
        this.cause = cause;
        this.getinfo = symbols[0];
        this.freeinfo = symbols[1];
        this.dupinfo = symbols[2];
        this.fabric = symbols[3];
        this.strerror = symbols[5];
        this.strdup = Linker.nativeLinker().defaultLookup().find("strdup").orElse(MemorySegment.NULL);
        this.version = version;
    }

    /** The library at {@code path} (a name for the loader or a file path), opened once. Never throws. */
    static FabricLibrary open(final String path) {
        return OPENED.computeIfAbsent(path, FabricLibrary::load);
    }

    private static FabricLibrary load(final String path) {
        final MemorySegment[] symbols = new MemorySegment[EXPORTS.length];
        java.util.Arrays.fill(symbols, MemorySegment.NULL);
        // Debian's libfabric links PSM (libinfinipath), whose load-time constructor replaces the process's SIGSEGV
        // handler with one that prints a backtrace and exits; the JVM needs SIGSEGV for null checks and safepoints,
        // so that handler would kill it at a random moment. IPATH_NO_BACKTRACE (and HFI_NO_BACKTRACE for older
        // PSM2) keep the constructors from installing it.
        NativeEnvironment.setIfAbsent("IPATH_NO_BACKTRACE", "1");
        NativeEnvironment.setIfAbsent("HFI_NO_BACKTRACE", "1");
        // RxM closes a peer's connection on fi_av_remove only with this (read once, when the library initializes):
        // FabricDomain.cancel resets a peer that way so that nothing it still queued lands after a timeout.
        NativeEnvironment.setIfAbsent("FI_AV_REMOVE_CLEANUP", "1");
        // RxM reads its connection events (a peer's connection request, a connection that broke) only every
        // cm_progress_interval microseconds of CQ polling while it is not connecting itself: 10 ms by default. A
        // tcp;ofi_rxm target drops its connection when it refuses a write, so each reconnection (the negative
        // acknowledgement of that write goes on the next one) waited up to two such ticks; 1 ms costs one EQ read
        // per millisecond of polling.
        NativeEnvironment.setIfAbsent("FI_OFI_RXM_CM_PROGRESS_INTERVAL", RXM_CM_PROGRESS_INTERVAL_US);
        final NativeLibrary library = NativeLibrary.load(path);
        if (!library.isAvailable()) {
            return new FabricLibrary(path, library.unavailabilityCause(), symbols, 0);
        }
        for (int i = 0; i < EXPORTS.length; i++) {
            final var symbol = library.find(EXPORTS[i]);
            if (symbol.isEmpty()) {
                return new FabricLibrary(
                        path, path + " does not export " + EXPORTS[i] + "; is it libfabric?", symbols, 0);
            }
            symbols[i] = symbol.get();
        }
        return new FabricLibrary(path, null, symbols, FabricCalls.intVoid(symbols[4]));
    }

    /** Null when usable, otherwise why not. */
    @Nullable String unavailabilityCause() {
        return cause;
    }

    String path() {
        return path;
    }

    /** The newest API version the library implements, {@code (major << 16) | minor}. */
    int version() {
        return version;
    }

    static int major(final int version) {
        return version >>> 16;
    }

    static int minor(final int version) {
        return version & 0xFFFF;
    }

    static int version(final int major, final int minor) {
        return (major << 16) | minor;
    }

    static String versionText(final int version) {
        return major(version) + "." + minor(version);
    }

    /** libfabric's text for a return code (either sign). Allocates. */
    String describe(final int code) {
        final MemorySegment text = FabricCalls.ptrI(strerror, Math.abs(code));
        return text.address() == 0 ? "code " + code : NATIVE.getString(text.address());
    }

    /** The exception for a failed call: function name, code and libfabric's text, plus errno when it adds to it. */
    NativeCallException failure(final String function, final long code, final int errno) {
        return new NativeCallException(function, (int) code, describe((int) code), errno);
    }

    /** Throws {@link #failure} when {@code rc} is negative. */
    void check(final String function, final long rc, final MemorySegment errnoState) {
        if (rc < 0) {
            throw failure(function, rc, Errno.read(errnoState));
        }
    }

    int getinfo(
            final int apiVersion,
            final MemorySegment node,
            final MemorySegment service,
            final long flags,
            final MemorySegment hints,
            final MemorySegment out,
            final MemorySegment errno) {
        return FabricCalls.intIPPLPP(getinfo, errno, apiVersion, node, service, flags, hints, out);
    }

    /** A blank fi_info with its attribute structs, allocated by the library so fi_freeinfo can free it. */
    MemorySegment allocInfo() {
        return FabricCalls.ptrP(dupinfo, MemorySegment.NULL);
    }

    MemorySegment dupInfo(final MemorySegment info) {
        return FabricCalls.ptrP(dupinfo, info);
    }

    void freeInfo(final MemorySegment info) {
        if (info.address() != 0) {
            FabricCalls.voidP(freeinfo, info);
        }
    }

    /** A malloc'd copy of {@code text}, for fi_info string fields that fi_freeinfo frees. */
    MemorySegment mallocString(final String text) {
        try (Arena arena = Arena.ofConfined()) {
            return FabricCalls.ptrP(strdup, arena.allocateFrom(text));
        }
    }

    int openFabric(final MemorySegment fabricAttr, final MemorySegment out, final MemorySegment errno) {
        return FabricCalls.intPPP(fabric, errno, fabricAttr, out, MemorySegment.NULL);
    }

    /** Reads a C string the library owns; empty for NULL. */
    static String string(final long address) {
        return address == 0 ? "" : NATIVE.getString(address);
    }

    static long pointer(final long address) {
        return NATIVE.get(ValueLayout.JAVA_LONG, address);
    }
}
