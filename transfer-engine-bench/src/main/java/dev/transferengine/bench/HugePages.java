package dev.transferengine.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Host memory that transparent huge pages may back ({@code --huge-pages}), as {@code tcp_stream REGION 1} does in C:
 * an anonymous mapping, 2 MiB aligned, advised {@code MADV_HUGEPAGE} before anything touches it (an arena's
 * allocation zeroes its memory, which would fault it in as 4 KiB pages first), unmapped when its arena closes; and
 * how much of a range huge pages back, from {@code AnonHugePages} in {@code /proc/self/smaps}. Linux only.
 */
final class HugePages {

    /** The size of a transparent huge page on x86-64 and arm64 (4 KiB base pages). */
    static final long HUGE_PAGE = 2L << 20;

    static final Path ENABLED = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");

    private static final int PROT_READ_WRITE = 0x3;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MADV_HUGEPAGE = 14;
    private static final long MAP_FAILED = -1L;

    private HugePages() {}

    /** The call failed, or huge pages cannot be asked for here; the message names the cause. */
    static final class UnavailableException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        UnavailableException(final String message) {
            super(message);
        }
    }

    /**
     * {@code bytes} of zeroed host memory (the mapping is {@code bytes} rounded up to 2 MiB) at a 2 MiB-aligned
     * address, advised {@code MADV_HUGEPAGE} and not yet touched; unmapped when {@code arena} closes. Blocks on the
     * system calls; allocates the mapping.
     *
     * @throws UnavailableException if this is not Linux, or mmap or madvise fails (with errno, its text and what
     *     {@code /sys/kernel/mm/transparent_hugepage/enabled} says)
     */
    @SuppressWarnings("restricted") // the mapping is exactly the length asked for, and lives until the arena closes
    static MemorySegment allocate(final Arena arena, final long bytes) {
        requireLinux();
        final long length = Math.ceilDiv(bytes, HUGE_PAGE) * HUGE_PAGE;
        try (Arena call = Arena.ofConfined()) {
            final MemorySegment errno = call.allocate(Linker.Option.captureStateLayout());
            // a mapping one huge page longer holds an aligned range of length; the rest is unmapped again
            final long mapped = length + HUGE_PAGE;
            final long start = ((MemorySegment) Libc.MMAP.invokeExact(
                            errno, MemorySegment.NULL, mapped, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0L))
                    .address();
            if (start == MAP_FAILED) {
                throw failure("mmap(" + mapped + " bytes)", errno(errno));
            }
            final long aligned = Math.ceilDiv(start, HUGE_PAGE) * HUGE_PAGE;
            unmap(start, aligned - start);
            unmap(aligned + length, start + mapped - (aligned + length));
            if ((int) Libc.MADVISE.invokeExact(errno, MemorySegment.ofAddress(aligned), length, MADV_HUGEPAGE) != 0) {
                final int error = errno(errno);
                unmap(aligned, length);
                throw failure("madvise(MADV_HUGEPAGE)", error);
            }
            return MemorySegment.ofAddress(aligned)
                    .reinterpret(length, arena, _ -> unmap(aligned, length))
                    .asSlice(0, bytes);
        } catch (final UnavailableException e) {
            throw e;
        } catch (final Throwable e) {
            throw new IllegalStateException("mmap/madvise through the native linker failed", e);
        }
    }

    /**
     * The bytes of {@code segment}'s range that huge pages back now: the {@code AnonHugePages} of the mappings of
     * {@code /proc/self/smaps} that overlap it (a mapping that reaches beyond the range counts whole). Blocks on
     * reading the file.
     */
    static long backedBytes(final MemorySegment segment) {
        return backedBytes(Path.of("/proc/self/smaps"), segment.address(), segment.byteSize());
    }

    /** {@link #backedBytes(MemorySegment)} of the range {@code [address, address + length)} in an smaps file. */
    static long backedBytes(final Path smaps, final long address, final long length) {
        final List<String> lines;
        try {
            lines = Files.readAllLines(smaps, StandardCharsets.UTF_8);
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot read " + smaps, e);
        }
        long kib = 0;
        boolean inside = false;
        for (final String line : lines) {
            final int dash = line.indexOf('-');
            final int space = line.indexOf(' ');
            if (dash > 0 && space > dash && isHex(line.substring(0, dash))) {
                // a mapping's header: "start-end perms offset dev inode path"
                final long start = Long.parseUnsignedLong(line.substring(0, dash), 16);
                final long end = Long.parseUnsignedLong(line.substring(dash + 1, space), 16);
                inside = Long.compareUnsigned(start, address + length) < 0 && Long.compareUnsigned(address, end) < 0;
            } else if (inside && line.startsWith("AnonHugePages:")) {
                kib += Long.parseLong(line.substring("AnonHugePages:".length())
                        .replace("kB", "")
                        .strip());
            }
        }
        return kib * 1024;
    }

    /** What {@code /sys/kernel/mm/transparent_hugepage/enabled} says, or why it says nothing. */
    static String enabledSetting() {
        try {
            return Files.readString(ENABLED, StandardCharsets.UTF_8).strip();
        } catch (final IOException e) {
            return "unreadable (" + e.getMessage() + "; a kernel without transparent huge pages has no such file)";
        }
    }

    /** Whether the setting lets madvised memory have huge pages: {@code [always]} or {@code [madvise]}. */
    static boolean madvisedMayHaveHugePages(final String setting) {
        return setting.contains("[always]") || setting.contains("[madvise]");
    }

    private static void requireLinux() {
        final String os = System.getProperty("os.name", "");
        if (!os.toLowerCase(Locale.ROOT).startsWith("linux")) {
            throw new UnavailableException(
                    "--huge-pages needs Linux (madvise MADV_HUGEPAGE, /proc/self/smaps); this is " + os);
        }
    }

    private static void unmap(final long address, final long length) {
        if (length == 0) {
            return;
        }
        try (Arena call = Arena.ofConfined()) {
            final MemorySegment errno = call.allocate(Linker.Option.captureStateLayout());
            if ((int) Libc.MUNMAP.invokeExact(errno, MemorySegment.ofAddress(address), length) != 0) {
                throw failure("munmap(" + length + " bytes)", errno(errno));
            }
        } catch (final UnavailableException e) {
            throw e;
        } catch (final Throwable e) {
            throw new IllegalStateException("munmap through the native linker failed", e);
        }
    }

    private static int errno(final MemorySegment state) {
        return (int) Libc.ERRNO_VALUE.get(state, 0L);
    }

    @SuppressWarnings("restricted") // strerror's text is a NUL-terminated string in libc's memory
    private static UnavailableException failure(final String call, final int errno) {
        String text;
        try {
            text = ((MemorySegment) Libc.STRERROR.invokeExact(errno))
                    .reinterpret(Long.MAX_VALUE)
                    .getString(0);
        } catch (final Throwable e) {
            text = "strerror failed: " + e;
        }
        return new UnavailableException(
                call + " failed: " + text + " (errno " + errno + "); " + ENABLED + ": " + enabledSetting());
    }

    private static boolean isHex(final String text) {
        return !text.isEmpty() && text.chars().allMatch(c -> Character.digit(c, 16) >= 0);
    }

    /** libc's handles, looked up on first use, after {@link #requireLinux()} passed. */
    private static final class Libc {

        private static final Linker LINKER = Linker.nativeLinker();
        private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
        private static final VarHandle ERRNO_VALUE =
                Linker.Option.captureStateLayout().varHandle(MemoryLayout.PathElement.groupElement("errno"));

        private static final MethodHandle MMAP = handle(
                "mmap",
                FunctionDescriptor.of(
                        ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS,
                        ValueLayout.JAVA_LONG,
                        ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_LONG));
        private static final MethodHandle MUNMAP = handle(
                "munmap", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
        private static final MethodHandle MADVISE = handle(
                "madvise",
                FunctionDescriptor.of(
                        ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
        private static final MethodHandle STRERROR =
                plainHandle("strerror", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));

        @SuppressWarnings("restricted") // libc's functions with their C signatures
        private static MethodHandle handle(final String name, final FunctionDescriptor descriptor) {
            return LINKER.downcallHandle(symbol(name), descriptor, ERRNO);
        }

        @SuppressWarnings("restricted") // libc's functions with their C signatures
        private static MethodHandle plainHandle(final String name, final FunctionDescriptor descriptor) {
            return LINKER.downcallHandle(symbol(name), descriptor);
        }

        private static MemorySegment symbol(final String name) {
            final SymbolLookup libc = LINKER.defaultLookup();
            return libc.find(name).orElseThrow(() -> new UnavailableException("libc has no " + name));
        }
    }
}
